package store

import (
	"testing"
	"time"
)

// TestAccepting: a capture keeps accepting bytes until it reaches its
// limit or the directory quota, and not after Discard (issue 26: what the
// runner asks before it ends a command whose reader has gone).
func TestAccepting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lim   Limits
		write []int // sizes written to stdout, in order
		want  bool
	}{
		{"nothing written", Limits{MaxCaptureBytes: 1000}, nil, true},
		{"under the limit", Limits{MaxCaptureBytes: 1000}, []int{400, 599}, true},
		{"exactly the limit", Limits{MaxCaptureBytes: 1000}, []int{1000}, true},
		{"one byte over", Limits{MaxCaptureBytes: 1000}, []int{1000, 1}, false},
		{"far over in one write", Limits{MaxCaptureBytes: 1000}, []int{50_000}, false},
		{"no limit", Limits{}, []int{1 << 20}, true},
		{"directory quota", Limits{DirQuota: 8192, QuotaChunk: 4096}, []int{64 << 10}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustOpen(t, t.TempDir())
			c, err := d.Create(time.Now(), tc.lim)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Discard()
			for _, n := range tc.write {
				c.Stream(Stdout).Write(pattern(n))
			}
			// The quota is charged by the file writer, after Write has
			// returned: wait for the verdict, up to a failure guard.
			got := c.Accepting()
			for deadline := time.Now().Add(10 * time.Second); got != tc.want && time.Now().Before(deadline); got = c.Accepting() {
				time.Sleep(5 * time.Millisecond)
			}
			if got != tc.want {
				t.Errorf("Accepting() = %v, want %v", got, tc.want)
			}
		})
	}
	d := mustOpen(t, t.TempDir())
	c, _ := d.Create(time.Now(), Limits{})
	c.Discard()
	if c.Accepting() {
		t.Error("Accepting() after Discard = true")
	}
}
