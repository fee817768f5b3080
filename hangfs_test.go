//go:build linux

package main

// SPEC §3: the store never holds the command hostage. These tests put the
// tool-outputs directory on a real file system that hangs on demand (FUSE,
// a loopback of a temporary directory whose operations block while a gate
// is closed) and run the real binary on it.

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// hangfsMain is the test helper "hangfs BACKING MOUNTPOINT": it mounts a
// FUSE loopback of BACKING at MOUNTPOINT, prints "ready" and serves until
// it is killed. The tests make the file system hang by stopping this
// process (SIGSTOP): requests it has not read wait in the kernel's queue,
// killable, as on a file server that stopped answering; SIGCONT ends the
// hang.
func hangfsMain(args []string) int {
	if len(args) != 2 {
		return 2
	}
	root, err := fs.NewLoopbackRoot(args[0])
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	srv, err := fuse.NewServer(fs.NewNodeFS(root, &fs.Options{}), args[1],
		&fuse.MountOptions{DirectMountStrict: true, Name: "capwrap-hangfs"})
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	os.Stdout.WriteString("ready\n")
	srv.Wait()
	return 0
}

// hangFS is a mounted hangfs: its mount point, the directory it serves
// and the serving process.
type hangFS struct {
	mnt, backing string
	proc         *os.Process
}

// stop makes the file system hang, once every thread of the server has
// stopped (a thread still running could read one more request); cont ends
// the hang.
func (h *hangFS) stop(t *testing.T) {
	h.proc.Signal(syscall.SIGSTOP)
	deadline := time.Now().Add(5 * time.Second)
	for !allStopped(h.proc.Pid) {
		if time.Now().After(deadline) {
			t.Fatal("the file server did not stop")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *hangFS) cont() { h.proc.Signal(syscall.SIGCONT) }

// allStopped reports whether every thread of pid is stopped.
func allStopped(pid int) bool {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/stat")
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			return false
		}
		if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) == 0 || f[0] != "T" {
			return false
		}
	}
	return len(tasks) > 0
}

// hangScript is a shell command that makes the file system hang, for good
// or, with d > 0, for d: once capwrap has written the line first to the
// capture's stdout file in dir (seen in the backing directory, past the
// hang), so that the capture is made before the hang; and until every
// thread of the server has stopped.
func (h *hangFS) hangScript(dir, first string, d time.Duration) string {
	pid := strconv.Itoa(h.proc.Pid)
	s := "for i in $(seq 3000); do grep -qsx '" + first + "' " + filepath.Join(h.backing, dir) + "/2*/stdout.live && break; sleep 0.01; done; " +
		"kill -STOP " + pid + "; while [ -n \"$(grep -L '^State:.*stopped' /proc/" + pid + "/task/*/status)\" ]; do sleep 0.01; done"
	if d > 0 {
		s += "; setsid sh -c 'sleep " + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "; kill -CONT " + pid + "' >/dev/null 2>&1 </dev/null & :"
	}
	return s
}

// mountHangFS mounts a hangfs over a new temporary directory; it is
// continued, unmounted and ended when the test ends. It skips without root
// or /dev/fuse.
func mountHangFS(t *testing.T) *hangFS {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a FUSE file system needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	backing, mnt := t.TempDir(), t.TempDir()
	cmd := &exec.Cmd{Path: exe, Args: []string{"hangfs", backing, mnt}, Stderr: os.Stderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &hangFS{mnt: mnt, backing: backing, proc: cmd.Process}
	t.Cleanup(func() {
		h.cont()
		syscall.Unmount(mnt, syscall.MNT_DETACH)
		h.proc.Kill()
		cmd.Wait()
	})
	line := make([]byte, 6)
	if n, _ := io.ReadFull(out, line); n != 6 || string(line) != "ready\n" {
		t.Skip("cannot mount a FUSE file system here")
	}
	return h
}

// runOnHangFS runs the real binary with args and returns its exit code,
// stdout, stderr and how long it took until its output ended (EOF on both
// pipes, the receipt printed). afterEOF, when set, runs then, before the
// exit is waited for (the kernel may hold the exit of a process with files
// on a hung file system until it answers). It fails after 30 s.
func runOnHangFS(t *testing.T, afterEOF func(), args ...string) (int, []byte, string, time.Duration) {
	t.Helper()
	cmd := exec.Command(termCapwrap(t), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CAPWRAP_DIR=")
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out, errOut []byte
	eof := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); errOut, _ = io.ReadAll(errPipe) }()
		out, _ = io.ReadAll(outPipe)
		wg.Wait()
		close(eof)
	}()
	select {
	case <-eof:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("capwrap's output did not end in 30 s")
	}
	took := time.Since(start)
	if afterEOF != nil {
		afterEOF()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("capwrap did not exit in 30 s; stderr:\n%s", errOut)
	}
	return cmd.ProcessState.ExitCode(), out, string(errOut), took
}

// TestHungDiskBeforeStart: a tool-outputs directory whose file system hangs
// from the start does not keep the command from running or its status from
// being returned; the capture is failed, writer_stalled.
func TestHungDiskBeforeStart(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a file system")
	}
	h := mountHangFS(t)
	mnt := h.mnt
	if err := os.Mkdir(filepath.Join(mnt, "to"), 0o700); err != nil {
		t.Fatal(err)
	}
	h.stop(t)
	code, out, errOut, took := runOnHangFS(t, nil, "--dir", filepath.Join(mnt, "to"), "--stall-timeout", "1s",
		"--", "sh", "-c", "echo ran; exit 3")
	if code != 3 || !bytes.Contains(out, []byte("ran\n")) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	rc := footer(t, out)
	if c := rc["capture"].(map[string]any); c["state"] != "failed" || c["reason"] != "writer_stalled" {
		t.Errorf("capture %v, want failed / writer_stalled", c)
	}
	if !strings.Contains(errOut, "hung file system") {
		t.Errorf("stderr does not say why: %q", errOut)
	}
	if took > 5*time.Second {
		t.Errorf("took %v", took)
	}
}

// TestHungDiskAfterExit: a file system that hangs while the capture is
// written, and stays hung, does not keep capwrap from printing the
// command's output and receipt, writer_stalled, within a few stall
// timeouts, and ending its output. Its exit then waits for the file system
// (Linux flushes a FUSE file at its last close and will not be
// interrupted): it follows as soon as the file system answers.
func TestHungDiskAfterExit(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a file system")
	}
	h := mountHangFS(t)
	var answered time.Time
	code, out, errOut, took := runOnHangFS(t, func() { answered = time.Now(); h.cont() },
		"--dir", filepath.Join(h.mnt, "to"), "--stall-timeout", "1s",
		"--", "sh", "-c", "echo before; "+h.hangScript("to", "before", 0)+"; echo after; exit 5")
	if code != 5 || !bytes.Contains(out, []byte("before\nafter\n")) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	rc := footer(t, out)
	if c := rc["capture"].(map[string]any); c["reason"] != "writer_stalled" {
		t.Errorf("capture %v, want writer_stalled", c)
	}
	if took > 8*time.Second {
		t.Errorf("the output ended after %v", took)
	}
	if d := time.Since(answered); d > 5*time.Second {
		t.Errorf("capwrap exited %v after the file system answered", d)
	}
}

// TestDiskStallAfterExit: a two-second stall of the disk while the command
// writes its last 9 MB and exits (more than the write queue holds, so the
// pipe reader waits for the writer) is the stall timeout's business, not
// the drain timeout's: nothing is cut.
func TestDiskStallAfterExit(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a file system")
	}
	h := mountHangFS(t)
	const n = 6 + 9000000
	code, out, errOut, _ := runOnHangFS(t, nil, "--dir", filepath.Join(h.mnt, "to"), "--drain-timeout", "300ms",
		"--", "sh", "-c", "echo start; "+h.hangScript("to", "start", 2*time.Second)+"; yes 0123456789abcdef | head -c 9000000")
	if code != 0 {
		t.Fatalf("exit %d, stdout %.2000q, stderr %q", code, out, errOut)
	}
	rc := footer(t, out)
	c := rc["capture"].(map[string]any)
	so := rc["streams"].(map[string]any)["stdout"].(map[string]any)
	// The short footer gives committed_bytes only when it differs from
	// observed_bytes.
	if c["state"] != "complete" || so["observed_bytes"] != float64(n) || so["committed_bytes"] != nil {
		t.Errorf("capture %v, stdout %v; want complete and %d bytes, all committed", c, so, n)
	}
}

// TestHungReceiptFile: a --receipt-file on a file system that hangs (a
// harness's conversation folder) is given up after --stall-timeout with a
// warning; the run's output and status come as usual.
func TestHungReceiptFile(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a file system")
	}
	h := mountHangFS(t)
	h.stop(t)
	code, out, errOut, took := runOnHangFS(t, nil, "--stall-timeout", "1s", "--receipt-file", filepath.Join(h.mnt, "r.json"),
		"--", "sh", "-c", "echo a; exit 7")
	if code != 7 || !bytes.Contains(out, []byte("a\n")) || !strings.Contains(errOut, "--receipt-file") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	footer(t, out)
	if took > 5*time.Second {
		t.Errorf("took %v", took)
	}
}

// TestHungHandBack: a hand-back while the tool-outputs file system hangs
// still tells the caller the job's ID within --stall-timeout (without a
// preview), and a --background job on a directory that hangs is refused
// before its command starts.
func TestHungHandBack(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a file system")
	}
	h := mountHangFS(t)
	defer h.cont()
	code, out, errOut, took := runOnHangFS(t, func() { h.cont() }, "--dir", filepath.Join(h.mnt, "to"), "--stall-timeout", "1s",
		"--background-after", "1s", "--", "sh", "-c", "echo x; "+h.hangScript("to", "x", 0)+"; sleep 30")
	if code != 75 || took > 5*time.Second {
		t.Fatalf("exit %d after %v; stdout %q; stderr %q", code, took, out, errOut)
	}
	if rc := footer(t, out); rc["id"] == nil {
		t.Errorf("the hand-back does not name the job")
	}
	h.stop(t)
	ran := filepath.Join(t.TempDir(), "ran")
	code, _, errOut, _ = runOnHangFS(t, func() { h.cont() }, "--dir", filepath.Join(h.mnt, "to2"), "--stall-timeout", "1s",
		"--background", "--", "sh", "-c", "echo ran > "+ran)
	if code != 125 || !strings.Contains(errOut, "a background job needs its capture") {
		t.Errorf("--background on a hung directory: exit %d, stderr %q", code, errOut)
	}
	// A command that ran would have written the file within milliseconds
	// of capwrap's exit; a second is generous on a busy machine.
	time.Sleep(time.Second)
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the refused job's command ran")
	}
}
