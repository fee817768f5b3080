package events

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/capwrap/capwrap/receipt"
)

// countSink counts what the publisher writes.
type countSink struct{ n int64 }

func (c *countSink) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
func (c *countSink) Close() error                { return nil }

// benchRate drives one publisher with a writer of the given rate (bytes
// per second; 0: as fast as it can) for d after idle, and reports the
// updates and bytes per second that reached the sink (SPEC §12: about
// 100 KB/s amortized, plus the final burst).
func benchRate(b *testing.B, rate int64, idle, d time.Duration) {
	line := []byte(strings.Repeat("x", 99) + "\n")
	for range b.N {
		sink := &countSink{}
		p := New(func() (io.WriteCloser, error) { return sink, nil }, Options{Chars: [2]int{50000, 2000}})
		time.Sleep(idle) // an idle start: the first change is published at once
		start := time.Now()
		var written int64
		for time.Since(start) < d {
			p.Stream(0).Write(line)
			written += int64(len(line))
			if rate > 0 {
				if ahead := time.Duration(written*int64(time.Second)/rate) - time.Since(start); ahead > 0 {
					time.Sleep(ahead)
				}
			}
		}
		p.Finish([2]Final{{Text: "end\n"}}, &receipt.Receipt{})
		secs := time.Since(start).Seconds()
		p.mu.Lock()
		b.ReportMetric(float64(p.Updates)/secs, "updates/s")
		b.ReportMetric(float64(p.Bytes)/secs, "event-B/s")
		b.ReportMetric(float64(written)/secs/1e6, "input-MB/s")
		p.mu.Unlock()
	}
}

// BenchmarkEvents1MBps: a command writing 1 MB/s for 2 s.
func BenchmarkEvents1MBps(b *testing.B) { benchRate(b, 1<<20, 0, 2*time.Second) }

// BenchmarkEvents100MBps: a command writing 100 MB/s (or as fast as the
// machine lets it) for 2 s.
func BenchmarkEvents100MBps(b *testing.B) { benchRate(b, 100<<20, 0, 2*time.Second) }

// BenchmarkEventsIdleThenBurst: 500 ms of nothing, then a burst as fast
// as it goes for 500 ms.
func BenchmarkEventsIdleThenBurst(b *testing.B) {
	benchRate(b, 0, 500*time.Millisecond, 500*time.Millisecond)
}
