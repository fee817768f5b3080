package match

import (
	"fmt"
	"strings"
	"testing"
)

// viewRecorder is a detector that waits for its whole window and records
// the last window and look-back it was shown.
type viewRecorder struct{ last *string }

func (viewRecorder) Window(kw int) int { return kw + 24 }
func (viewRecorder) Back() int         { return 8 }

func (d viewRecorder) Eval(w, pre []byte, kw int, final bool, sink SpanSink) (bool, int) {
	if !final {
		return true, 0
	}
	*d.last = fmt.Sprintf("%q | %q", pre, w)
	return false, 0
}

type nopSink struct{}

func (nopSink) Add(int, int, int32, Extender) {}

// TestEscapeHint: the stream skips looking for a display escape in a
// window and its look-back when none was fed since the look-back's start
// (stream.lastEsc); the detector is shown the same view as EvalDisplay
// gives for the same bytes, with the escape anywhere before, in or after
// the look-back and the window, fed in one write or split anywhere.
func TestEscapeHint(t *testing.T) {
	const esc = "\x1b[31m"
	var got string
	m := New([]Keyword{{Text: []byte("tok"), Exact: true, Det: viewRecorder{&got}}}, [][]byte{[]byte("[x]")}, nil)
	for _, c := range []struct {
		at    int
		first bool // another escape at the start
	}{{-1, false}, {0, false}, {10, false}, {30, false}, {36, false}, {39, false}, {40, false}, {44, false},
		{50, false}, {60, false}, {66, false}, {80, false}, {40, true}, {50, true}, {80, true}} {
		in := []byte(strings.Repeat("a", 40) + "tok" + strings.Repeat("b", 60))
		at := c.at
		if at >= 0 {
			if at > 37 && at < 43 {
				at = 43 // the keyword's own bytes hold no escape
			}
			in = []byte(string(in[:at]) + esc + string(in[at:]))
		}
		if c.first {
			in = []byte(esc + string(in))
		}
		k := strings.Index(string(in), "tok")
		var want string
		win := viewRecorder{}.Window(3)
		w := in[k:min(len(in), k+RawWindow(win))]
		EvalDisplay(viewRecorder{&want}, win, w, in[max(0, k-8):k], 3, true, nopSink{})
		for _, sizes := range [][]int{nil, {1}, {2}, {3}, {7}, {41, 1}, {64}} {
			got = ""
			writeChunks(t, m, in, sizes)
			if got != want {
				t.Errorf("escape at %d (and at 0: %v), writes of %v: shown %s, want %s", at, c.first, sizes, got, want)
			}
		}
	}
}
