package match

import (
	"errors"
	"io"
	"sync/atomic"
)

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("redact: write after close")

// Writer runs one byte stream through a Matcher: it writes to its
// destination the bytes written to it, each merged run of spans replaced by
// its marker and every other byte unchanged.
//
// Its output is the same however the input is split into writes. It holds
// back at most the Matcher's Holdback() bytes of text that may still turn
// out to be part of a span, and releases them once decided; bytes it has
// written are never rewritten. Its memory is about 64 KiB plus twice the
// holdback, plus 8 KiB of prefilter verdicts (one bit per byte of a 64 KiB
// chunk), whatever the size of a Write. The destination sees at most one
// Write per 64 KiB of input plus one per marker.
//
// A Writer is not safe for concurrent Writes; Replaced may be called from
// any goroutine.
type Writer struct {
	s        stream
	closed   bool
	replaced atomic.Int64
	decided  atomic.Int64
}

// NewWriter returns a Writer of m's matches to dst. The caller must Close
// it at end of stream to release what it holds; Close does not close dst.
//
// remember says which part of the value of a span a detector decided (of
// MinValue bytes or more) masks its later occurrences: it returns a
// sub-slice of v (v itself, or v without a separator the span began
// with; nil or fewer than MinValue bytes: none), and that part is masked
// in this stream and, when mem is not nil, in every other Writer sharing
// mem. obs, if not nil,
// is told of every run replaced by a marker. Either may be nil.
func NewWriter(m *Matcher, dst io.Writer, remember func(v []byte) []byte, mem *Memory, obs Observer) *Writer {
	w := &Writer{}
	w.s.init(m, dst, remember, mem, obs)
	return w
}

// Write runs b through the matcher and writes whatever is now decided to
// the destination. It returns len(b) unless the destination fails, in
// which case it returns the number of bytes of b consumed and the
// destination's error; that error is sticky (every later Write and Close
// return it). After Close it returns ErrClosed.
func (w *Writer) Write(b []byte) (int, error) {
	if w.closed {
		return 0, ErrClosed
	}
	if w.s.err != nil {
		return 0, w.s.err
	}
	n, err := w.s.write(b)
	w.replaced.Store(w.s.replaced)
	w.decided.Store(min(w.s.rel, w.s.pos))
	return n, err
}

// Close decides and writes out everything still held back (the end of the
// stream settles every open window). It does not close the destination. It
// returns the destination's error, if any; a second Close returns the same.
func (w *Writer) Close() error {
	w.closed = true
	err := w.s.close()
	w.replaced.Store(w.s.replaced)
	w.decided.Store(min(w.s.rel, w.s.pos))
	return err
}

// Replaced returns how many markers have been written so far: overlapping
// and adjacent spans merged into one marker count once.
func (w *Writer) Replaced() int64 { return w.replaced.Load() }

// Decided returns how many input bytes, from the start of the stream, are
// final: written to the destination as they are, or replaced by a marker
// already written. The rest of the input (at most the holdback) is held
// back; after a Close that returned no error there is none.
func (w *Writer) Decided() int64 { return w.decided.Load() }

// Tentative returns the bytes at the end of the input that the Writer holds
// back only because they may begin a keyword whose own text is public (a
// keyword with a Detector: the catalogue's "ghp_", "password", a pattern's
// literal prefix), when nothing else is pending: no candidate, span, run or
// remembered value reaches into them, and everything before them has been
// written. They are then at most the longest such keyword's length, in
// bytes, and none of them is a secret's. It returns nil otherwise (nothing
// held, a value that waits for its detector's decision, the beginning of a
// literal secret, after Close). The slice is valid until the next Write or
// Close; like Write, it must not be called concurrently with them.
func (w *Writer) Tentative() []byte {
	if w.closed {
		return nil
	}
	return w.s.tentative()
}
