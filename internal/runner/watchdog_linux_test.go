package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRefusedRunDisarmsWatchdog: the watchdog's helper starts while
// prepare runs (startWatchdog), so a run that prepare refuses (here: its
// tool-outputs directory is a file) has started one; it must be disarmed
// and reaped all the same, not left reading its pipe or as a zombie.
func TestRefusedRunDisarmsWatchdog(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	o, _, _ := testRun(t, dir, []string{"true"}, func(c *Config) { c.Dir, c.DirFromFlag = file, true })
	if o.Refused == nil {
		t.Fatalf("a tool-outputs directory that is a file: not refused (exit %d)", o.ExitStatus())
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		kids := children(t)
		if len(kids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("children %v still there a minute after a refused run", kids)
		}
	}
}

// children lists the test process's child processes, zombies included
// (/proc/self/task/*/children).
func children(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil || len(files) == 0 {
		t.Fatalf("no /proc/self/task/*/children (%v)", err)
	}
	var kids []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that has ended
		}
		kids = append(kids, strings.Fields(string(b))...)
	}
	return kids
}
