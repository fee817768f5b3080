package wrap

import (
	"bytes"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// countWriter counts the bytes written to it, from any goroutine.
type countWriter struct{ n atomic.Int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return len(p), nil
}

// BenchmarkRunPump measures Run end to end on a child (cat) writing 64 MiB
// to stdout: spawn, the pipe reads of ReadBufferSize bytes, one Write per
// read into a writer that only counts, drain and reaping. Bytes per second
// are the pump's throughput including the child's own writes.
func BenchmarkRunPump(b *testing.B) {
	const size = 64 << 20
	data := filepath.Join(b.TempDir(), "data")
	line := []byte("tests/test_api.py::test_list PASSED                                  [ 42%]\n")
	if err := os.WriteFile(data, bytes.Repeat(line, size/len(line)+1)[:size], 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out, errs countWriter
		res := Run(Config{Args: []string{"cat", data}, Stdout: &out, Stderr: &errs, DrainTimeout: time.Second, KillAfter: time.Second})
		if res.State != StateExited || res.ExitCode != 0 || out.n.Load() != size {
			b.Fatalf("state %s, exit %d, %d bytes", res.State, res.ExitCode, out.n.Load())
		}
	}
}
