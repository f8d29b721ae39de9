package orc

// Test helpers shared with the external test package (java_test.go),
// which cannot live inside package orc: it imports interop, which imports
// the table layer, which imports this package.
var (
	TestSchema  = testSchema
	GenRows     = genRows
	WriteFileTB = writeFile
)
