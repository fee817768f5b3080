package wrap

import (
	"os"
	"os/exec"
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
// other member does not; it returns the group's ID.
func group(t *testing.T) (pgid int, wait func() error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `trap "" TERM; sleep 300 & wait; wait`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	time.Sleep(100 * time.Millisecond) // the trap is set
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
	for groupAlive(pgid) {
		if time.Since(start) > 3*time.Second {
			t.Fatalf("group %d still alive %v after capwrap's end of the pipe closed", pgid, time.Since(start))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("group ended after %v: SIGKILL came before kill-after", d)
	}
}

// TestWatchdogDisarm: a disarmed helper exits without signalling the group.
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
	time.Sleep(500 * time.Millisecond)
	if !groupAlive(pgid) {
		t.Fatalf("a disarmed watchdog ended the group")
	}
}
