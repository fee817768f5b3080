package wrap

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestMain lets this test binary serve as the watchdog helper, as capwrap's
// main does: StartWatchdog runs os.Executable() with WatchdogArg.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == WatchdogArg {
		os.Exit(WatchdogMain(os.Stdin, os.Args[2:]))
	}
	os.Exit(m.Run())
}

// group starts a process group whose leader ignores SIGTERM and whose
// other member does not; it returns the group's ID once the leader's trap
// is set (it creates the file $0 then).
func group(t *testing.T) (pgid int, wait func() error) {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command("sh", "-c", `trap "" TERM; sleep 300 & : >"$0"; wait; wait`, ready)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	if err := waitFile(ready); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid, cmd.Wait
}

// TestWatchdogEndsGroupAtEOF: when capwrap's end of the pipe closes without
// a disarm (capwrap died), the helper sends SIGTERM, then SIGKILL after
// kill-after, to the whole group.
func TestWatchdogEndsGroupAtEOF(t *testing.T) {
	pgid, wait := group(t)
	wd, err := StartWatchdog(300 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := wd.arm(pgid); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	wd.w.Close() // what the kernel does when capwrap dies
	wait()       // the leader ends (SIGKILL: it ignores SIGTERM)
	// The SIGKILL is due 300 ms after the EOF; the group would live 300 s
	// without it. 10 s is generous for a busy machine.
	for groupAlive(pgid) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("group %d still alive %v after capwrap's end of the pipe closed", pgid, time.Since(start))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("group ended after %v: SIGKILL came before kill-after", d)
	}
}

// TestWatchdogDisarm: a disarmed helper exits without signalling the group.
// The group is looked at once the helper has exited (a helper that acted
// instead would have sent SIGTERM, which ends the group's sleep at once,
// and SIGKILL 100 ms later, before it exited), and again a second later,
// for a signal in flight.
func TestWatchdogDisarm(t *testing.T) {
	pgid, _ := group(t)
	wd, err := StartWatchdog(100 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := wd.arm(pgid); err != nil {
		t.Fatal(err)
	}
	wd.Disarm()
	wd.Disarm() // twice is harmless
	deadline := time.Now().Add(patience)
	for watchdogRuns("100ms") {
		if time.Now().After(deadline) {
			t.Fatalf("the disarmed watchdog still runs after %v", patience)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for range 2 {
		if n := liveMembers(pgid); n != 2 {
			t.Fatalf("a disarmed watchdog signalled the group: %d of its 2 processes live", n)
		}
		time.Sleep(time.Second)
	}
}

// watchdogRuns reports whether a watchdog helper this test binary started
// with killAfter is alive (from /proc; false without it).
func watchdogRuns(killAfter string) bool {
	self := strconv.Itoa(os.Getpid())
	want := []byte("capwrap\x00" + WatchdogArg + "\x00" + killAfter + "\x00")
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:]) // state ppid ...
		if len(f) < 2 || string(f[1]) != self || string(f[0]) == "Z" {
			continue
		}
		if line, _ := os.ReadFile(filepath.Dir(p) + "/cmdline"); bytes.Equal(line, want) {
			return true
		}
	}
	return false
}

// liveMembers counts the processes of group pgid that are not zombies
// (from /proc; 2, the group's size here, without it).
func liveMembers(pgid int) int {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return 2
	}
	n := 0
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:]) // state ppid pgrp ...
		if len(f) >= 3 && string(f[2]) == strconv.Itoa(pgid) && string(f[0]) != "Z" {
			n++
		}
	}
	return n
}
