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
	return evalDisplay(d, win, w, pre, kw, final, sink, false)
}

// evalDisplay is EvalDisplay; clean tells that neither w nor pre holds an
// ESC (the caller knows where the stream's last one is), which spares
// looking for one.
func evalDisplay(d Detector, win int, w, pre []byte, kw int, final bool, sink SpanSink, clean bool) (bool, int) {
	if len(w) >= win {
		if clean || bytes.IndexByte(w[:win], scan.Esc) < 0 && bytes.IndexByte(pre, scan.Esc) < 0 {
			return d.Eval(w[:win], pre, kw, true, sink)
		}
	} else if clean || bytes.IndexByte(w, scan.Esc) < 0 && bytes.IndexByte(pre, scan.Esc) < 0 {
		return d.Eval(w, pre, kw, final, sink)
	}
	v := viewPool.Get().(*view)
	defer viewPool.Put(v)
	v.reset(w, final, win)
	v.sink = sink
	defer func() { v.sink, v.w = nil, nil }()
	pre = afterEscapes(pre)
	// The view is built as far as the detector reads: first the keyword and viewStep
	// bytes, then twice as many while it waits for more (Eval decides
	// early only when more bytes cannot change its answer, so a decision
	// on a prefix is the decision on the whole).
	for lim := kw + viewStep; ; lim *= 2 {
		done := v.extend(lim)
		pending, from := d.Eval(v.b, pre, kw, v.final(), v)
		if !pending || done {
			return pending, v.raw(from)
		}
	}
}

// viewStep is how many view bytes past its keyword EvalDisplay shows a
// detector first (a keyword longer than that, such as Bedrock's
// 44-byte "bedrock-api-key-YmVk…", is always shown whole).
const viewStep = 32

// view is a window w with its display escapes removed, in runs: the view
// bytes from runs[j].v on are the bytes of w from runs[j].r on, up to the
// next run; the view covers w[:cut].
type view struct {
	w    []byte
	b    []byte
	runs []viewRun
	i    int  // next byte of w to read
	cut  int  // end of the bytes of w the view covers
	win  int  // most view bytes
	wfin bool // w will not grow
	sink SpanSink
}

// viewRun is where a run of the view starts, in the view and in w.
type viewRun struct{ v, r int32 }

var viewPool = sync.Pool{New: func() any { return new(view) }}

// reset readies v to show w, whose detector's Window is win.
func (v *view) reset(w []byte, final bool, win int) {
	v.w, v.b, v.runs, v.i, v.cut, v.win, v.wfin = w, v.b[:0], v.runs[:0], 0, 0, win, final
}

// extend grows the view to lim bytes (at most win) or as far as w allows,
// and reports whether it is complete: win bytes, all of w, or cut before
// an escape w ends inside while w may grow (the view of a longer w only
// grows at its end, as Eval requires).
func (v *view) extend(lim int) bool {
	lim = min(lim, v.win)
	w := v.w
	for v.i < len(w) && len(v.b) < lim {
		if w[v.i] == scan.Esc {
			n, lex := scan.EscapeAt(w, v.i)
			if lex == scan.Yes {
				v.i += n
				continue
			}
			if lex == scan.More && !v.wfin {
				v.cut = v.i
				return true
			}
		}
		// A run of bytes up to the next ESC (this one, if not an escape,
		// included), as far as lim.
		end := len(w)
		if k := bytes.IndexByte(w[v.i+1:], scan.Esc); k >= 0 {
			end = v.i + 1 + k
		}
		end = min(end, v.i+lim-len(v.b))
		if n := len(v.runs); n == 0 || int(v.runs[n-1].r)+len(v.b)-int(v.runs[n-1].v) != v.i {
			v.runs = append(v.runs, viewRun{v: int32(len(v.b)), r: int32(v.i)})
		}
		v.b = append(v.b, w[v.i:end]...)
		v.i = end
	}
	v.cut = v.i
	return len(v.b) == v.win || v.i == len(w)
}

// final reports whether the view will not grow: it holds win bytes, or it
// covers all of a w that will not grow.
func (v *view) final() bool {
	return len(v.b) == v.win || v.wfin && v.cut == len(v.w)
}

// raw maps view offset k (0 <= k <= len(b)) to the offset in w of the view
// byte k, or to cut for k == len(b).
func (v *view) raw(k int) int {
	if k >= len(v.b) {
		return v.cut
	}
	j := len(v.runs) - 1
	for j > 0 && int(v.runs[j].v) > k {
		j--
	}
	return int(v.runs[j].r) + k - int(v.runs[j].v)
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
