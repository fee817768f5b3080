package match

import (
	"bytes"
	"sync"

	"github.com/capwrap/capwrap/redact/internal/scan"
)

// Display escapes (issue 27): jq -C, yq, grep --color, git --color and
// the like put colour sequences between a key and its value, around the
// value and inside it ("password=\x1b[01;31m\x1b[KS3cr\x1b[m\x1b[K3t").
// A detector is shown what a terminal shows: when its window or look-back
// holds an ESC, EvalDisplay hands it the window with every display escape
// (scan.EscapeAt) removed and maps the spans it reports back to stream
// bytes. A span covers the escapes inside it; those before its first byte
// and after its last stay, so colours still reset. Windows without an ESC
// (plain logs) cost one bytes.IndexByte of the window per evaluation.

// DisplaySlack is how many bytes of display escapes a detector's window
// may hold on top of its Window (see RawWindow).
const DisplaySlack = 256

// displayWindowMax bounds the windows DisplaySlack widens, so that it
// never widens the holdback of the built-in catalogue (its largest
// window, a JWT's, is 4096 bytes).
const displayWindowMax = 4096

// RawWindow returns how many stream bytes, from its keyword's start, a
// detector whose Window is win is evaluated on: win plus DisplaySlack bytes
// for the escapes EvalDisplay removes, but no more than 4096 bytes in all
// unless win is larger. The detector is still shown at most win bytes.
func RawWindow(win int) int { return max(win, min(win+DisplaySlack, displayWindowMax)) }

// EvalDisplay calls d.Eval on the display view of w and pre (see
// Detector.Eval for the arguments and results), w being up to
// RawWindow(win) stream bytes from the keyword's start and win d's Window.
// When neither holds an ESC in what d is shown, they are the view. Otherwise
// the window's view is w without its display escapes, at most win bytes of
// it, cut before an escape that w ends inside unless final (so that a
// longer w's view only grows at its end, as Eval requires); a view of win
// bytes is final. The
// look-back's view is what follows the last display escape in pre (an
// escape starts a token: "\x1b[31mAKIA…" is not glued to the colour). The
// keyword's own bytes, w[:kw], hold no ESC (keywords are found in the
// stream as they are). Spans and from are mapped back to offsets in w: a
// span starts at the stream byte of its first view byte and ends after
// that of its last.
func EvalDisplay(d Detector, win int, w, pre []byte, kw int, final bool, sink SpanSink) (bool, int) {
	if len(w) >= win {
		if bytes.IndexByte(w[:win], scan.Esc) < 0 && bytes.IndexByte(pre, scan.Esc) < 0 {
			return d.Eval(w[:win], pre, kw, true, sink)
		}
	} else if bytes.IndexByte(w, scan.Esc) < 0 && bytes.IndexByte(pre, scan.Esc) < 0 {
		return d.Eval(w, pre, kw, final, sink)
	}
	v := viewPool.Get().(*view)
	defer viewPool.Put(v)
	final = v.build(w, final, win)
	v.sink = sink
	pending, from := d.Eval(v.b, afterEscapes(pre), kw, final, v)
	v.sink = nil
	return pending, v.raw(from)
}

// view is a window with its display escapes removed: b[k] is w[at[k]], and
// the view covers w[:cut].
type view struct {
	b    []byte
	at   []int32
	cut  int
	sink SpanSink
}

var viewPool = sync.Pool{New: func() any { return new(view) }}

// build makes v the view of w, at most win bytes of it, and returns
// whether the view is final: w is, or the view is win bytes long.
func (v *view) build(w []byte, final bool, win int) bool {
	v.b, v.at, v.cut = v.b[:0], v.at[:0], len(w)
	for i := 0; i < len(w); {
		if len(v.b) == win {
			v.cut = i
			return true
		}
		if w[i] == scan.Esc {
			n, lex := scan.EscapeAt(w, i)
			if lex == scan.Yes {
				i += n
				continue
			}
			if lex == scan.More && !final {
				v.cut = i
				return false
			}
		}
		v.b = append(v.b, w[i])
		v.at = append(v.at, int32(i))
		i++
	}
	return final || len(v.b) == win
}

// raw maps view offset k (0 <= k <= len(b)) to the offset in w of the view
// byte k, or to cut for k == len(b).
func (v *view) raw(k int) int {
	if k < len(v.at) {
		return int(v.at[k])
	}
	return v.cut
}

// Add implements SpanSink: the span [s, e) of the view is the bytes of w
// from view byte s to view byte e-1.
func (v *view) Add(s, e int, kind int32, ext Extender) {
	if e <= s {
		return
	}
	v.sink.Add(v.raw(s), v.raw(e-1)+1, kind, ext)
}

// afterEscapes returns what follows the last display escape in pre, or
// pre when it holds none.
func afterEscapes(pre []byte) []byte {
	start := 0
	for i := 0; i < len(pre); {
		if pre[i] == scan.Esc {
			if n, lex := scan.EscapeAt(pre, i); lex == scan.Yes {
				i += n
				start = i
				continue
			}
		}
		i++
	}
	return pre[start:]
}

// StripDisplay returns b without its display escapes (b itself when it
// holds none): the value a span of EvalDisplay's covers, as a terminal
// shows it, which is what is remembered.
func StripDisplay(b []byte) []byte {
	if bytes.IndexByte(b, scan.Esc) < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if b[i] == scan.Esc {
			if n, lex := scan.EscapeAt(b, i); lex == scan.Yes {
				i += n
				continue
			}
		}
		out = append(out, b[i])
		i++
	}
	return out
}
