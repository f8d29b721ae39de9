package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// watchPeak samples the heap every 50 ms and, whenever the heap in use grows
// 5% past its previous maximum, rewrites path with a heap profile: at the
// end path holds a profile taken near the peak, which is what peak RSS is
// made of. The returned function stops the watcher.
func watchPeak(path string) func() {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var max uint64
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > max+max/20 {
				max = ms.HeapInuse
				if f, err := os.Create(path); err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					f.Close()
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
