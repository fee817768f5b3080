package runner

import (
	"strings"
	"testing"

	"github.com/capwrap/capwrap/wrap"
)

// TestDescendantsLine: the one human line about the processes a command
// left running names a few (every holder of a stream), counts the rest,
// and says what capwrap did with them.
func TestDescendantsLine(t *testing.T) {
	many := wrap.Result{DescendantCount: 12}
	for i := range 10 {
		many.Descendants = append(many.Descendants, wrap.Descendant{PID: 100 + i, Command: "worker"})
	}
	many.Descendants = append(many.Descendants, wrap.Descendant{PID: 200, Command: "tail -f log", Holds: "stderr"})
	for _, tc := range []struct {
		name string
		res  wrap.Result
		want string
	}{
		{"none", wrap.Result{}, ""},
		{"one holding stdout, ended", wrap.Result{DescendantCount: 1, Descendants: []wrap.Descendant{{PID: 4242, Command: "sleep 30", Holds: "stdout"}}},
			"the command left 1 process running: 4242 sleep 30 (it held stdout open); capwrap ended it (SIGTERM, then SIGKILL --kill-after later); --leave-descendants leaves it running"},
		{"two, left", wrap.Result{DescendantCount: 2, DescendantsLeft: true, Descendants: []wrap.Descendant{{PID: 1, Command: "a"}, {PID: 2}}},
			"the command left 2 processes running: 1 a, 2; left running (--leave-descendants)"},
		{"many: three, the holder, and the rest counted", many,
			"the command left 12 processes running: 100 worker, 101 worker, 102 worker, 200 tail -f log (it held stderr open) and 8 more; capwrap ended them (SIGTERM, then SIGKILL --kill-after later); --leave-descendants leaves them running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := descendantsLine(tc.res)
			if got != tc.want {
				t.Errorf("line\n%q\nwant\n%q", got, tc.want)
			}
			if strings.Contains(got, "\n") || len(got) > 600 {
				t.Errorf("not one bounded line: %d bytes", len(got))
			}
		})
	}
}

// TestDisplayCommand: a descendant's command line, the process's own
// choice, reaches the warning line and the receipt without the escape
// sequences and control bytes that would retitle or clear a terminal,
// on one line (a breaker's find: `exec -a "$(printf '\033]0;pwned\007')"`).
func TestDisplayCommand(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"sleep 30", "sleep 30"},
		{"\x1b]0;pwned\x07\x1b[2J x 52", "x 52"},
		{"\x1b[31mred\nnl\tx", "red nl x"},
		{"a\x00b\x7fc", `a\x00b\x7fc`},
		{"  lead   trail  ", "lead trail"},
	} {
		got := displayCommand(tc.in)
		if got != tc.want {
			t.Errorf("displayCommand(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Errorf("displayCommand(%q) = %q holds control %U", tc.in, got, r)
			}
		}
	}
}
