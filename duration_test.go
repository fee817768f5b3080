package main

import (
	"testing"
	"time"
)

// TestDurationParsing covers the duration syntax of every duration flag:
// Go's, plus days (issue 15).
func TestDurationParsing(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true}, {"500ms", 500 * time.Millisecond, true}, {"10s", 10 * time.Second, true},
		{"1h30m", 90 * time.Minute, true}, {"1.5h", 90 * time.Minute, true}, {"2us", 2 * time.Microsecond, true},
		{"7d", 7 * day, true}, {"1d12h", 36 * time.Hour, true}, {"2.5d", 60 * time.Hour, true},
		{"0.5d", 12 * time.Hour, true}, {".5d", 12 * time.Hour, true}, {"1d1d", 2 * day, true},
		{"12h1d", 36 * time.Hour, true}, {"1d2h3m4s", day + 2*time.Hour + 3*time.Minute + 4*time.Second, true},
		{"-1d", -day, true}, {"+2d", 2 * day, true}, {" 3d ", 3 * day, true}, {"0d", 0, true},
		{"106751d", 106751 * day, true},
		{"", 0, false}, {"d", 0, false}, {"7", 0, false}, {"7x", 0, false}, {"1dd", 0, false},
		{"1d-2h", 0, false}, {"--1d", 0, false}, {"1.2.3d", 0, false}, {"7D", 0, false}, {"1 d", 0, false},
		{"soon", 0, false}, {"106752d", 0, false}, {"9999999999h", 0, false}, {"106751d1d", 0, false},
	}
	for _, tt := range tests {
		got, err := parseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestDurationFlags: every duration flag, global or a verb's, is one of
// capwrap's (days accepted), not pflag's own.
func TestDurationFlags(t *testing.T) {
	var o options
	fs := newFlagSet(&o)
	for _, name := range []string{"timeout", "kill-after", "drain-timeout", "stall-timeout", "background-after"} {
		if err := fs.Set(name, "1d12h"); err != nil {
			t.Errorf("--%s 1d12h: %v", name, err)
		}
	}
	if o.timeout != 36*time.Hour || o.killAfter != 36*time.Hour || o.drainTimeout != 36*time.Hour ||
		o.stallTimeout != 36*time.Hour || o.backgroundAfter != 36*time.Hour {
		t.Errorf("durations %v %v %v %v %v, want 36h each", o.timeout, o.killAfter, o.drainTimeout, o.stallTimeout, o.backgroundAfter)
	}
	err := fs.Parse([]string{"--timeout", "soon"})
	if got, want := flagError(err), `invalid --timeout "soon": not a duration`; len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("flagError = %q, want it to start %q", got, want)
	}
}
