package runner

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capwrap/capwrap/internal/guard"
	"github.com/capwrap/capwrap/redact"
	"github.com/capwrap/capwrap/store"
)

// sink is one stream's entry stage: the redactor, or a pass-through when
// redaction is off, in front of dst. The redaction policy is compiled when
// first needed (lazyPolicy): the first Write or Stage waits for it, and a
// stream that gets no byte needs none. Should the policy fail, the sink
// writes nothing (fail closed) and the run reports the error.
//
// In tee mode live is the stream's live copy: when the redactor holds back
// only the beginning of a public keyword (Writer.Tentative: an echoed "o"
// that may begin "oauth", the "l" of a terminal's "\e[?2004l") and no byte
// arrives for tentativeDelay, the live copy shows those bytes at once, so a
// shell's echo, a prompt or an escape sequence does not wait for the next
// output. The files and the preview get only what the redactor decided.
type sink struct {
	dst   io.Writer
	ready func() (*redact.Policy, error)
	mem   *redact.Memory // shared with the run's other stream
	live  *liveWriter    // tee mode's live copy, also in dst; nil otherwise
	file  *lazyStream    // the capture's writer, also in dst; held for each step (nil: none)
	once  sync.Once
	begun atomic.Bool    // init has run: a Write or Stage came
	w     io.Writer      // dst, the redactor or io.Discard; set by init
	r     *redact.Writer // the redactor, nil without one

	mu     sync.Mutex  // serializes the redactor between Write, Close and the idle show
	idle   *time.Timer // shows the tentative bytes; nil until first needed
	closed bool

	in     int64  // raw bytes written to the sink; the pump's, then settle's
	ledger ledger // raw bytes decided, representation bytes out (SPEC §7 accounting)
}

// tentativeDelay is how long a stream must be idle before its live copy
// shows what the redactor holds back tentatively: short enough that a
// typed key's echo looks immediate, long enough that output arriving in
// several writes is decided first.
const tentativeDelay = 20 * time.Millisecond

// init makes the sink's writer, waiting for the policy; the first Write or
// Stage calls it.
func (s *sink) init() {
	s.once.Do(func() {
		defer s.begun.Store(true)
		policy, err := s.ready()
		out := tap{l: &s.ledger, dst: s.dst}
		switch {
		case err != nil:
			s.w = io.Discard
		case policy == nil:
			s.w = out
		default:
			s.r = policy.NewSharedWriter(out, s.mem)
			s.w = s.r
		}
	})
}

// Write passes p through the redactor, once the policy is ready.
func (s *sink) Write(p []byte) (int, error) {
	s.init()
	if s.live == nil || s.r == nil {
		return s.write(p)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.write(p)
	s.armTentative()
	return n, err
}

// armTentative starts (or restarts) the idle timer that shows the live
// copy what the redactor holds tentatively, if it holds any. s.mu is held.
func (s *sink) armTentative() {
	if len(s.r.Tentative()) > 0 {
		if s.idle == nil {
			s.idle = time.AfterFunc(tentativeDelay, s.showTentative)
		} else {
			s.idle.Reset(tentativeDelay)
		}
	}
}

// Stage scans p without releasing it (wrap.Stager: the run stages a read
// of one stream and what the other holds, then commits both, so that a
// secret found in either is masked in both; issue 27). Without a redactor
// it is Write.
func (s *sink) Stage(p []byte) error {
	s.init()
	if s.r == nil {
		_, err := s.write(p)
		return err
	}
	if s.live != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	n, err := s.r.Stage(p)
	s.in += int64(n)
	return err
}

// Commit releases what Stage scanned, as Write would have.
func (s *sink) Commit() error {
	if s.r == nil {
		return nil
	}
	if s.live == nil {
		return s.commit()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.commit()
	s.armTentative()
	return err
}

// commit is Commit's step, recorded in the ledger as write's.
func (s *sink) commit() error {
	s.hold()
	defer s.release()
	released0, out0 := s.ledger.counts()
	replaced0 := s.replaced()
	err := s.r.Commit()
	s.ledger.step(released0, out0, s.decided(), s.replaced() != replaced0)
	return err
}

// write hands p to the redactor (or straight on) and records the step in
// the ledger: the raw bytes decided, and whether a marker was written.
func (s *sink) write(p []byte) (int, error) {
	s.hold()
	defer s.release()
	released0, out0 := s.ledger.counts()
	replaced0 := s.replaced()
	n, err := s.w.Write(p)
	s.in += int64(n)
	s.ledger.step(released0, out0, s.decided(), s.replaced() != replaced0)
	return n, err
}

// hold and release bracket one step of the sink: the capture file's
// writer is woken once for what the step hands on (lazyStream.hold).
func (s *sink) hold() {
	if s.file != nil {
		s.file.hold()
	}
}

func (s *sink) release() {
	if s.file != nil {
		s.file.release()
	}
}

// decided is the number of raw bytes whose representation has been handed
// on: all that came in without a redactor, else what it has decided. With
// a failed policy nothing is handed on.
func (s *sink) decided() int64 {
	switch {
	case s.r != nil:
		return s.r.Decided()
	case s.w == io.Discard:
		return 0
	}
	return s.in
}

// showTentative shows the live copy what the redactor holds tentatively.
func (s *sink) showTentative() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		if t := s.r.Tentative(); len(t) > 0 {
			s.live.tentative(t)
		}
	}
}

// started reports whether the sink has made its writer (init): the
// policy was then needed.
func (s *sink) started() bool { return s.begun.Load() }

// Close releases what the redactor holds back. A sink that got no byte
// holds nothing, and needs no policy.
func (s *sink) Close() error {
	if !s.started() || s.r == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.idle != nil {
		s.idle.Stop()
	}
	s.hold()
	defer s.release()
	released0, out0 := s.ledger.counts()
	replaced0 := s.replaced()
	err := s.r.Close()
	s.ledger.step(released0, out0, s.decided(), s.replaced() != replaced0)
	return err
}

// replaced is the number of redactions made in this stream.
func (s *sink) replaced() int64 {
	if s.r == nil {
		return 0
	}
	return s.r.Replaced()
}

// seen are the secrets this stream's redactor masked (nil without one).
func (s *sink) seen() [][]byte {
	if s.r == nil {
		return nil
	}
	return s.r.Seen()
}

// liveWriter copies a stream to capwrap's own stdout or stderr in tee mode.
// After the first error (EPIPE: the reader went away) it stops writing there
// and reports success, so the capture goes on (SPEC §2).
//
// It may run ahead of the redactor's decisions by the bytes the sink shows
// tentatively; the decided output skips them once it reaches them. Should
// it differ from them (the public prefix began a secret: "gh", then
// "ghp_…" decided as a marker), the rest of the decided output follows
// what was shown.
//
// An escape sequence is written whole: one cut by the end of a write (the
// redactor holding back its final byte, the other stream's output coming
// meanwhile) waits here for its end, so that the terminal never reads the
// other stream's first byte as the sequence's final one.
type liveWriter struct {
	mu      sync.Mutex
	w       io.Writer
	err     error
	midLine bool   // the last byte given to write was not a newline
	ahead   []byte // shown tentatively, not decided yet
	esc     []byte // an escape sequence begun, not written yet
}

func (l *liveWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	if len(l.ahead) > 0 && len(p) > 0 {
		c := 0
		for c < len(p) && c < len(l.ahead) && p[c] == l.ahead[c] {
			c++
		}
		p = p[c:]
		if c == len(l.ahead) || len(p) > 0 {
			l.ahead = l.ahead[:0] // reached, or the decision differs
		} else {
			l.ahead = l.ahead[c:] // decided a part of what was shown
		}
	}
	l.write(p)
	return n, nil
}

// tentative shows t, the bytes the redactor holds back tentatively, of
// which the first len(l.ahead) are shown already.
func (l *liveWriter) tentative(t []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(t) <= len(l.ahead) || string(t[:len(l.ahead)]) != string(l.ahead) {
		return
	}
	t = t[len(l.ahead):]
	l.write(t)
	l.ahead = append(l.ahead, t...)
}

func (l *liveWriter) write(p []byte) {
	if len(p) == 0 {
		return
	}
	l.midLine = p[len(p)-1] != '\n'
	if len(l.esc) > 0 {
		p = append(l.esc, p...)
		l.esc = nil
	}
	if i := unfinishedEscape(p); i >= 0 {
		l.esc = append([]byte(nil), p[i:]...)
		p = p[:i]
	}
	if l.err == nil && len(p) > 0 {
		_, l.err = l.w.Write(p)
	}
}

// flush writes an escape sequence still waiting for its end (the stream
// ended inside it).
func (l *liveWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.esc) > 0 && l.err == nil {
		_, l.err = l.w.Write(l.esc)
	}
	l.esc = nil
}

// maxEscape is the longest escape sequence liveWriter holds whole, bytes:
// a longer one (an OSC title or hyperlink) goes as it comes.
const maxEscape = 256

// unfinishedEscape returns where an escape sequence that p ends inside
// begins (ECMA-48: ESC, then a CSI's "[" with parameter and intermediate
// bytes and no final byte yet, an OSC's "]" or a DCS's "P" without its
// terminator, or an intermediate byte), or -1.
func unfinishedEscape(p []byte) int {
	i := bytes.LastIndexByte(p[max(0, len(p)-maxEscape):], 0x1b)
	if i < 0 {
		return -1
	}
	i += max(0, len(p)-maxEscape)
	seq := p[i+1:]
	if len(seq) == 0 {
		return i // ESC alone
	}
	switch seq[0] {
	case '[': // CSI: parameters and intermediates 0x20–0x3F, final 0x40–0x7E
		for _, c := range seq[1:] {
			if c >= 0x40 && c <= 0x7e {
				return -1
			}
			if c < 0x20 || c > 0x3f {
				return -1 // not a CSI after all: nothing to hold
			}
		}
		return i
	case ']', 'P': // OSC, DCS: until BEL or ESC \ (whose ESC would be the last one)
		if bytes.IndexByte(seq, 0x07) >= 0 {
			return -1
		}
		return i
	}
	if seq[0] >= 0x20 && seq[0] <= 0x2f { // intermediates, as in ESC ( B
		for _, c := range seq[1:] {
			if c >= 0x30 && c <= 0x7e {
				return -1
			}
		}
		return i
	}
	return -1
}

// lazyCapture creates the run's capture when it is first needed: at the
// first byte of output (SPEC §4: the files hold the output from its first
// byte), when the live receipt is due, or at the end of a run whose capture
// is kept. A command that prints nothing and whose capture is not kept costs
// no directory at all (start-up, issue 8). The tool-outputs directory itself
// is opened and checked before the command starts, as before.
type lazyCapture struct {
	create  func() (*store.Capture, error)
	started time.Time   // the run's start, for the arrival index
	onError func(error) // reports a failure to create, once; may be called from a pump goroutine
	warnf   func(format string, args ...any)
	guard   *guard.Guard // bounds the creation (nil: unbounded)
	onMade  func()       // called once the capture has been created (nil: none), outside the locks

	once    sync.Once
	mu      sync.Mutex
	c       *store.Capture
	err     error
	arrival *store.Arrival
}

// made is what the creation of a capture produced.
type made struct {
	c       *store.Capture
	arrival *store.Arrival
	err     error // the capture's
	aerr    error // the arrival index's
}

// get returns the capture, creating it on the first call. The error is the
// creation's, the same on every call; the capture is then nil. A creation
// that hangs past the stall timeout is given up (guard.ErrHung), and what it
// makes after that is discarded.
func (l *lazyCapture) get() (*store.Capture, error) {
	l.once.Do(func() {
		var g made // the creating goroutine's; read here only once it is done
		herr := l.guard.Do("creating the capture", func() {
			g.c, g.err = l.create()
			if g.err == nil {
				// The arrival index records the order in which
				// sanitized chunks reach the capture (`capwrap read
				// --interleaved`, SPEC §8); without it the capture
				// goes on.
				g.arrival, g.aerr = g.c.Arrival(l.started)
			}
		}, func() {
			if g.c != nil {
				g.arrival.Close()
				g.c.Discard()
			}
		})
		m := made{err: herr}
		if herr == nil {
			m = g
		}
		if m.aerr != nil {
			l.warnf("cannot record the arrival order in %s: %v", m.c.Path(), store.UnwrapPath(m.aerr))
			m.arrival = nil
		}
		l.mu.Lock()
		l.c, l.err, l.arrival = m.c, m.err, m.arrival
		l.mu.Unlock()
		if m.err != nil {
			l.onError(m.err)
		} else if l.onMade != nil {
			l.onMade()
		}
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c, l.err
}

// made returns the capture if it has been created, without creating it.
func (l *lazyCapture) made() (*store.Capture, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c, l.err
}

// stream returns the writer of stream name ("stdout" or "stderr"): the
// capture's file and the arrival index, the capture created at the first
// byte. If it cannot be created the bytes are dropped here (the preview and
// the live terminal still get them) and the receipt says why.
func (l *lazyCapture) stream(name string) *lazyStream {
	return &lazyStream{l: l, name: name}
}

type lazyStream struct {
	l    *lazyCapture
	name string
	w    io.Writer // set at the first Write; nil if the capture failed
	done bool

	sw   *store.StreamWriter // the capture's writer, with w
	arr  *store.Arrival      // the arrival index, with w; nil without one
	held bool                // between hold and release
}

func (s *lazyStream) Write(p []byte) (int, error) {
	if !s.done {
		s.done = true
		if c, err := s.l.get(); err == nil {
			s.sw = c.Stream(s.name)
			s.w = s.sw
			if s.arr = s.l.arrival; s.arr != nil {
				s.w = io.MultiWriter(s.w, s.arr.Writer(s.name))
			}
			if s.held {
				s.sw.Hold()
				s.arr.Hold()
			}
		}
	}
	if s.w == nil {
		return len(p), nil
	}
	return s.w.Write(p)
}

// hold and release bracket the Writes of one step of the sink (a read, a
// commit, the close): the capture's file writer and the arrival index are
// woken once for the step, not once per Write (StreamWriter.Hold). Called
// from the goroutine that writes.
func (s *lazyStream) hold() {
	s.held = true
	if s.sw != nil {
		s.sw.Hold()
		s.arr.Hold()
	}
}

func (s *lazyStream) release() {
	s.held = false
	if s.sw != nil {
		s.sw.Release()
		s.arr.Release()
	}
}

// closeArrival ends the arrival index, if there is one.
func (l *lazyCapture) closeArrival() error {
	l.mu.Lock()
	a := l.arrival
	l.mu.Unlock()
	return a.Close()
}

// id names the capture in messages: its ID, or "(none)" if it was never made.
func (l *lazyCapture) id() string {
	if c, _ := l.made(); c != nil {
		return c.ID()
	}
	return "(none)"
}
