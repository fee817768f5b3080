package wrap

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
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

// TestWatchdogShellStage: until there is something to do (end of file, a
// note), the helper is its light shell stage, not a second start of
// capwrap (the start-up cost of issue 28); a disarm ends it there.
func TestWatchdogShellStage(t *testing.T) {
	pgid, _ := group(t)
	wd, err := StartWatchdog(150 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := wd.markWith("X=1"); err != nil {
		t.Fatal(err)
	}
	if err := wd.arm(pgid); err != nil {
		t.Fatal(err)
	}
	wd.exited(false)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", wd.pid))
	if err != nil {
		t.Skipf("cannot tell what the helper runs: %v", err)
	}
	if exe == self {
		t.Errorf("the helper is %s, want the shell stage before end of file or a note", exe)
	}
	wd.Disarm()
	deadline := time.Now().Add(patience)
	for watchdogRuns("150ms") {
		if time.Now().After(deadline) {
			t.Fatalf("the disarmed watchdog still runs after %v", patience)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := liveMembers(pgid); n != 2 {
		t.Fatalf("a disarmed watchdog signalled the group: %d of its 2 processes live", n)
	}
}

// TestWatchdogReapedAtDisarm: while the run goes on, no goroutine waits
// for the helper (a wait4 blocked for the whole run holds a thread of its
// own, issue 28); once disarmed, the helper is reaped and forgotten.
func TestWatchdogReapedAtDisarm(t *testing.T) {
	wd, err := StartWatchdog(170 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	if strings.Contains(stacks, "created by github.com/capwrap/capwrap/wrap.StartWatchdog") {
		t.Errorf("a goroutine waits for the armed helper:\n%s", stacks)
	}
	spawnMu.Lock()
	mine := owned[wd.pid]
	spawnMu.Unlock()
	if !mine {
		t.Errorf("helper %d not owned before Disarm: reapOrphans could take its status", wd.pid)
	}
	wd.Disarm()
	deadline := time.Now().Add(patience)
	for {
		spawnMu.Lock()
		mine = owned[wd.pid]
		spawnMu.Unlock()
		_, err := os.Stat(fmt.Sprintf("/proc/%d", wd.pid))
		if !mine && (runtime.GOOS != "linux" || os.IsNotExist(err)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("helper %d not reaped %v after Disarm (owned %v, /proc: %v)", wd.pid, patience, mine, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// watchdogRuns reports whether a watchdog helper this test binary started
// with killAfter is alive, in its shell stage or as the helper proper
// (from /proc; false without it).
func watchdogRuns(killAfter string) bool {
	self := strconv.Itoa(os.Getpid())
	want := []byte("\x00" + WatchdogArg + "\x00" + killAfter + "\x00")
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
		if line, _ := os.ReadFile(filepath.Dir(p) + "/cmdline"); bytes.Contains(line, want) {
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

// TestWatchdogNote: told where to leave a note (NoteTo), the helper creates
// it, exclusively and 0600, before it ends a group that is still alive at
// end of file, in the directory it opened when told (a later rename and a
// symbolic link in its place change nothing), whatever bytes its path
// holds; also for a group gone before capwrap reaped its leader (the
// kernel's parent-death SIGTERM got there first). A disarmed helper, or
// one that finds the group gone after capwrap reaped the leader, leaves
// none.
func TestWatchdogNote(t *testing.T) {
	const name = "killed.txt"
	for i, tc := range []struct {
		what   string
		dir    string // under a temporary directory
		end    string // "eof" (capwrap dies), "disarm", "gone" (the group ends, capwrap reaps it, then eof), "unreaped" (the group ends, then eof)
		swap   bool   // the directory renamed and a symbolic link put in its place, once opened
		exists bool   // a file at the note's name already
		want   string // what the note says; "" for none
	}{
		{what: "armed at eof", dir: "capture", end: "eof", want: "sent SIGTERM to process group %d at "},
		{what: "spaces, quotes, newline", dir: "a \"dir\" with\nnewline", end: "eof", want: "sent SIGTERM to process group %d at "},
		{what: "renamed and replaced by a link", dir: "capture", end: "eof", swap: true, want: "sent SIGTERM to process group %d at "},
		{what: "name taken", dir: "capture", end: "eof", exists: true},
		{what: "disarmed", dir: "capture", end: "disarm"},
		{what: "group gone", dir: "capture", end: "gone"},
		{what: "group gone, not reaped", dir: "capture", end: "unreaped", want: "found process group %d ended at "},
	} {
		t.Run(tc.what, func(t *testing.T) {
			tmp := t.TempDir()
			dir := filepath.Join(tmp, tc.dir)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if tc.exists {
				if err := os.WriteFile(filepath.Join(dir, name), []byte("mine"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			pgid, wait := group(t)
			killAfter := time.Duration(200+i) * time.Millisecond // tells this case's helper from the others'
			wd, err := StartWatchdog(killAfter)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(wd.Disarm)
			if err := wd.arm(pgid); err != nil {
				t.Fatal(err)
			}
			if err := wd.NoteTo(dir, name); err != nil {
				t.Fatal(err)
			}
			note, elsewhere := filepath.Join(dir, name), ""
			if tc.swap {
				awaitOpen(t, wd.pid, dir)
				moved := filepath.Join(tmp, "moved")
				other := filepath.Join(tmp, "other")
				if err := os.Rename(dir, moved); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(other, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(other, dir); err != nil {
					t.Fatal(err)
				}
				note, elsewhere = filepath.Join(moved, name), filepath.Join(other, name)
			}
			switch tc.end {
			case "eof":
				wd.mu.Lock()
				wd.w.Close() // what the kernel does when capwrap dies
				wd.w = nil
				wd.mu.Unlock()
				wait() // ends once the helper has acted
			case "disarm":
				wd.Disarm()
			case "gone", "unreaped":
				syscall.Kill(-pgid, syscall.SIGKILL)
				wait()
				for groupAlive(pgid) {
					time.Sleep(10 * time.Millisecond)
				}
				if tc.end == "gone" {
					wd.exited(false)
				}
				wd.mu.Lock()
				wd.w.Close()
				wd.w = nil
				wd.mu.Unlock()
			}
			deadline := time.Now().Add(patience)
			for watchdogRuns(killAfter.String()) {
				if time.Now().After(deadline) {
					t.Fatalf("the watchdog still runs after %v", patience)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if tc.end == "disarm" && liveMembers(pgid) != 2 {
				t.Errorf("a disarmed watchdog signalled the group")
			}
			b, err := os.ReadFile(note)
			switch {
			case tc.exists:
				if string(b) != "mine" {
					t.Errorf("the file at the note's name holds %q, want it untouched", b)
				}
			case tc.want == "" && err == nil:
				t.Errorf("note written: %q", b)
			case tc.want == "":
			case err != nil:
				t.Errorf("no note: %v", err)
			default:
				want := fmt.Sprintf(tc.want, pgid)
				if !bytes.Contains(b, []byte(want)) || !bytes.HasSuffix(b, []byte("\n")) {
					t.Errorf("note %q, want a line with %q", b, want)
				}
				if fi, err := os.Stat(note); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("note's mode: %v %v, want 0600", fi.Mode(), err)
				}
			}
			if elsewhere != "" {
				if _, err := os.Lstat(elsewhere); err == nil {
					t.Errorf("note written through the link, at %s", elsewhere)
				}
			}
		})
	}
}

// awaitOpen waits until process pid has directory dir open (from /proc:
// the helper's note root); it skips the test without /proc.
func awaitOpen(t *testing.T, pid int, dir string) {
	t.Helper()
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	if _, err := os.Stat(fds); err != nil {
		t.Skipf("no %s: cannot tell when the helper has opened the directory", fds)
	}
	deadline := time.Now().Add(patience)
	for {
		links, _ := filepath.Glob(fds + "/*")
		for _, l := range links {
			if target, err := os.Readlink(l); err == nil && target == dir {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the helper has not opened %s after %v", dir, patience)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWatchdogWaitOnDisarm: with WaitOnDisarm, Disarm returns only once
// the helper has exited and been reaped (a nested capwrap's, which its
// enclosing capwrap would otherwise find re-parented to it and report as
// left running). Without it Disarm returns at once, the helper still
// reading its pipe or exiting.
func TestWatchdogWaitOnDisarm(t *testing.T) {
	for range 5 {
		wd, err := StartWatchdog(171 * time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		wd.WaitOnDisarm()
		wd.Disarm()
		spawnMu.Lock()
		mine := owned[wd.pid]
		spawnMu.Unlock()
		if mine {
			t.Fatalf("helper %d still owned when Disarm returned: not reaped yet", wd.pid)
		}
		if err := syscall.Kill(wd.pid, 0); err != syscall.ESRCH {
			t.Fatalf("helper %d still exists when Disarm returned (kill 0: %v)", wd.pid, err)
		}
	}
}
