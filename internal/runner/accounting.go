package runner

import (
	"io"
	"sync"
	"unicode/utf8"

	"github.com/capwrap/capwrap/receipt"
)

// A stream's raw bytes and its representation (SPEC §7 "accounting"):
// the sink hands the redactor raw bytes; the redactor passes what it has
// decided on, each secret replaced by a marker, to the capture file, the
// preview and the live copy. The store cuts that representation where
// persistence stops (capture_limit, directory_quota, a write error,
// writer_stalled) and reports how many of its bytes the file got
// (committed_bytes). The ledger maps that count back to raw bytes, so the
// receipt can say how many raw bytes the file holds (accepted) and how
// many it never will (discarded).

// ledger counts one stream at the sink: raw bytes in, raw bytes the
// redactor has decided on (released), representation bytes out, and the
// map from representation back to raw. Its methods are safe for the pump
// goroutine and the run's settle step.
type ledger struct {
	mu       sync.Mutex
	released int64  // raw bytes decided: their representation is out
	out      int64  // representation bytes handed on
	raw      rawMap // representation offset → raw offset
	utf8     utf8Check
}

// tap is the representation's way out of the redactor: it counts and
// checks what goes through, then hands it to dst.
type tap struct {
	l   *ledger
	dst io.Writer
}

func (t tap) Write(p []byte) (int, error) {
	t.l.mu.Lock()
	t.l.out += int64(len(p))
	t.l.utf8.write(p)
	t.l.mu.Unlock()
	return t.dst.Write(p)
}

// step records that the raw bytes decided so far are released and the
// markers written so far replaced; out0 and released0 are the counts
// before the step (a Write or Close of the sink), replacedChanged says a
// marker was written in it.
func (l *ledger) step(released0, out0, released int64, replacedChanged bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.released = released
	if replacedChanged || l.out-out0 != released-released0 {
		l.raw.bend(span{r0: released0, r1: released, o0: out0, o1: l.out})
	}
}

// counts returns the raw bytes released and representation bytes out.
func (l *ledger) counts() (released, out int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.released, l.out
}

// facts returns what the receipt needs of the ledger: raw bytes
// released, the map back to raw bytes, and whether the representation is
// valid UTF-8 (an unfinished sequence at its end is not).
func (l *ledger) facts() (released int64, m rawMap, validUTF8 bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.released, l.raw.clone(), l.utf8.valid()
}

// span is a step of the stream in which the representation is not the raw
// bytes themselves (a marker was written): raw [r0, r1) became
// representation [o0, o1).
type span struct{ r0, r1, o0, o1 int64 }

// maxSpans bounds the spans a rawMap keeps: past it, neighbours merge
// (coarser, never wrong: see rawMap).
const maxSpans = 4096

// rawMap maps a representation offset back to a raw offset. Between its
// spans, in order, the representation is the raw bytes shifted by a fixed
// amount; inside a span the position of the marker is not known, so an
// offset there maps to the span's start: a file cut inside a step that
// wrote a marker counts that step's raw bytes as not in the file
// (discarded), never the other way round.
type rawMap struct{ spans []span }

func (m *rawMap) bend(s span) {
	if len(m.spans) == maxSpans {
		// Halve the list: merge each pair (a cut inside the merged span
		// counts its raw bytes discarded; outside it nothing changes).
		k := 0
		for i := 0; i+1 < len(m.spans); i += 2 {
			a, b := m.spans[i], m.spans[i+1]
			m.spans[k] = span{r0: a.r0, r1: b.r1, o0: a.o0, o1: b.o1}
			k++
		}
		m.spans = m.spans[:k]
	}
	m.spans = append(m.spans, s)
}

func (m rawMap) clone() rawMap { return rawMap{spans: append([]span(nil), m.spans...)} }

// raw returns the number of raw bytes whose representation lies within
// the first c bytes of the representation.
func (m rawMap) raw(c int64) int64 {
	var shift int64 // representation offset − raw offset after the last span passed
	for _, s := range m.spans {
		if c < s.o0 {
			break
		}
		if c < s.o1 {
			return s.r0
		}
		shift = s.o1 - s.r1
	}
	return max(0, c-shift)
}

// utf8Check tells whether the bytes written to it, in any number of
// writes, are valid UTF-8.
type utf8Check struct {
	invalid bool
	carry   []byte // the start of a sequence cut by the end of a write
}

func (u *utf8Check) write(p []byte) {
	if u.invalid || len(p) == 0 {
		return
	}
	if len(u.carry) > 0 {
		k := min(len(p), utf8.UTFMax-len(u.carry))
		b := append(append([]byte(nil), u.carry...), p[:k]...)
		if !utf8.FullRune(b) {
			u.carry = b // still short: p was shorter than the sequence
			return
		}
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			u.invalid = true
			return
		}
		p = p[n-len(u.carry):]
		u.carry = nil
	}
	// A sequence that the end of p cuts waits for the next write.
	tail := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				tail = i
			}
			break
		}
	}
	if !utf8.Valid(p[:tail]) {
		u.invalid = true
		return
	}
	u.carry = append(u.carry[:0], p[tail:]...)
}

// valid reports whether everything written was valid UTF-8, a sequence
// left unfinished at the end included.
func (u *utf8Check) valid() bool { return !u.invalid && len(u.carry) == 0 }

// accounting settles one stream's raw bytes for the receipt (SPEC §7):
// observed were read, released were decided by the redactor, and the file
// holds the first committed bytes of the representation, which m maps back
// to raw bytes. Accepted are the raw bytes whose representation the file
// holds; Discarded the released ones it does not (persistence stopped
// first, or no capture was made); Pending the observed ones not released.
func accounting(observed, released, committed int64, m rawMap) receipt.Accounting {
	accepted := min(m.raw(committed), released)
	return receipt.Accounting{Observed: observed, Accepted: accepted, Pending: observed - released, Discarded: released - accepted}
}

// representation names what a stream's file holds (SPEC §7): raw with
// --no-redact, else redacted text when the representation is valid UTF-8
// and binary when it is not (bytes as read but for the markers).
func representation(redacting, validUTF8 bool) receipt.Representation {
	switch {
	case !redacting:
		return receipt.RepresentationRaw
	case validUTF8:
		return receipt.RepresentationRedactedText
	}
	return receipt.RepresentationBinary
}
