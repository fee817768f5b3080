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
			"the command left 1 process running: 4242 sleep 30 (it held stdout open); capwrap ended it (SIGTERM, then SIGKILL --kill-after later); --leave-descendants leaves them running"},
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
