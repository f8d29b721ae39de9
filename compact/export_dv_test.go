package compact

// CommitResults is commitResults, for the deletion-vector commit tests:
// compaction refuses deletion-vector tables until the lookup merge is
// wired, so they build JobResults themselves.
var CommitResults = commitResults
