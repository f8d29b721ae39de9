package datafile

import (
	"testing"

	"github.com/compactd/compactd/fileio"
)

// A local store keeps its small read buffers when the daemon wraps it to
// count its operations (fileio.Observe).
func TestReadBufferSizeSeesThroughObservedStores(t *testing.T) {
	local := fileio.NewLocal()
	observed := fileio.Observe(local, func(string, error) {})
	if got, want := readBufferSize(observed, 8), readBufferSize(local, 8); got != want {
		t.Fatalf("read buffer of an observed local store: %d bytes, want the local %d", got, want)
	}
}
