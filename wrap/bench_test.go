package wrap

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
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

// BenchmarkSubreaper is the start-up cost of becoming the command tree's
// subreaper (one prctl or procctl).
func BenchmarkSubreaper(b *testing.B) {
	for b.Loop() {
		becomeSubreaper()
	}
}

// BenchmarkLeftBehindCheck is the look at the end of every run for
// descendants left behind, with none there but a watchdog (as in capwrap).
func BenchmarkLeftBehindCheck(b *testing.B) {
	wd, err := StartWatchdog(time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer wd.Disarm()
	c := &child{pid: 1 << 22}
	spawnMu.Lock()
	runs++
	spawnMu.Unlock()
	defer func() { spawnMu.Lock(); runs--; spawnMu.Unlock() }()
	for b.Loop() {
		c.leftBehind()
		if c.res.DescendantCount != 0 {
			b.Fatal("descendants found")
		}
	}
}

// BenchmarkOwnChildren is the look at capwrap's own children that a
// SIGCHLD costs (reapOrphans), with a watchdog and no orphan.
func BenchmarkOwnChildren(b *testing.B) {
	wd, err := StartWatchdog(time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer wd.Disarm()
	for b.Loop() {
		reapOrphans(ownChildren(othersOwn(0)))
	}
}

// BenchmarkTreeWalk is the full walk made when something is left (or at
// a stop): ten descendants of one shell.
func BenchmarkTreeWalk(b *testing.B) {
	cmd := exec.Command("sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 300 & done; wait")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Process.Kill(); cmd.Wait() }()
	cmd.SysProcAttr = nil
	c := &child{pid: cmd.Process.Pid}
	spawnMu.Lock()
	runs++
	spawnMu.Unlock()
	defer func() { spawnMu.Lock(); runs--; spawnMu.Unlock() }()
	for len(live(c.tree())) < 11 {
		time.Sleep(10 * time.Millisecond)
	}
	b.ResetTimer()
	for b.Loop() {
		c.tree()
	}
}
