package wrap

import (
	"errors"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The two streams' order (issue 27, the two-stream race). A command that
// writes a secret's keyed form to stdout and then its bare value to stderr
// (or the other way round) has put the first bytes in their pipe before the
// second: when capwrap reads the second, the first are there to be read.
// So every read of a stream, and the hand-over of its bytes, happens under
// one lock for both streams (order), and a read that returns bytes also
// takes, without waiting, what the other stream's pipe holds at that
// moment (up to ReadBufferSize bytes). When both writers are Stagers, both
// reads are staged (scanned, their secrets' values remembered) before
// either is committed (released), so that a value found in either is
// masked in both: a secret capwrap has identified is never shown after it,
// whichever stream carries it and whichever pipe capwrap read first. A
// writer that is not a Stager gets its bytes as before, one Write per
// read, and the other stream is not read ahead.

// Stager is a stream writer (Config.Stdout, Config.Stderr) that takes a
// read in two steps: Stage scans p and keeps it (the slice is reused
// afterwards: it must copy what it keeps), Commit hands on what the Stages
// since the last Commit left. Between them the other stream's writer may
// Stage and Commit; Run never calls one writer's methods concurrently.
// Either may return ErrCloseStream; other errors are ignored, as Write's.
type Stager interface {
	Stage(p []byte) error
	Commit() error
}

// order is what the two streams of a run share: the lock under which each
// is read and handed on.
type order struct {
	mu sync.Mutex
}

// pair links the run's two streams (either may be nil).
func pair(a, b *stream) {
	if a == nil || b == nil {
		return
	}
	o := &order{}
	a.ord, b.ord = o, o
	a.peer, b.peer = b, a
}

// take reads what fd (s's own descriptor) holds, and hands it on with what
// the other stream holds at that moment (see order). It returns the read's
// count and error (unix.EAGAIN: nothing there).
func (s *stream) take(fd int) (int, error) {
	if s.ord != nil {
		s.ord.mu.Lock()
		defer s.ord.mu.Unlock()
	}
	n, err := readFD(fd, s.buf)
	if n <= 0 {
		return n, err
	}
	s.observed.Add(int64(n))
	own, _ := s.dst.(Stager)
	p := s.peer
	var other Stager
	if p != nil && own != nil && !p.done && !p.closed.Load() {
		other, _ = p.dst.(Stager)
	}
	m := 0
	if other != nil {
		m = p.readNow()
	}
	if m == 0 {
		s.hand(func() error {
			_, err := s.dst.Write(s.buf[:n])
			return err
		})
		return n, err
	}
	p.observed.Add(int64(m))
	s.hand(func() error { return own.Stage(s.buf[:n]) })
	p.hand(func() error { return other.Stage(p.buf[:m]) })
	s.hand(own.Commit)
	p.hand(other.Commit)
	return n, err
}

// readNow reads, without waiting, what s's descriptor holds: at most
// len(s.buf) bytes into s.buf. It returns how many (0: none, end of file,
// an error, or s closed); an end of file or error is s's own pump's to
// find on its next read. The order lock is held.
func (s *stream) readNow() int {
	rc, err := s.r.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Control(func(fd uintptr) {
		n, _ = readFD(int(fd), s.buf)
	})
	return max(n, 0)
}

// readFD is read(2) on a non-blocking descriptor, retried on EINTR.
func readFD(fd int, buf []byte) (int, error) {
	for {
		n, err := unix.Read(fd, buf)
		if err != unix.EINTR {
			return n, err
		}
	}
}

// hand runs f, which hands bytes to s's writer. Once the drain clock runs,
// the time spent in it is added to the deadline, which is set again for
// the next read: a slow or stalled disk behind the writer is the store's
// business (--stall-timeout), not the drain's. ErrCloseStream from f asks
// for s to be closed once its descriptor is no longer in use (closeAsked).
func (s *stream) hand(f func() error) {
	s.mu.Lock()
	s.writeFrom = time.Now()
	s.mu.Unlock()
	if err := f(); errors.Is(err, ErrCloseStream) {
		s.closeReq.Store(true)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.deadline.IsZero() {
		from := s.writeFrom
		if from.Before(s.exited) {
			from = s.exited
		}
		s.deadline = s.deadline.Add(time.Since(from))
		_ = s.r.SetReadDeadline(s.deadline)
	}
	s.writeFrom = time.Time{}
}

// closeAsked closes s if its writer asked for it (ErrCloseStream), once.
// It is called outside any read of s's descriptor: closing waits for those
// to end.
func (s *stream) closeAsked() {
	if s.closeReq.Load() && s.closing.CompareAndSwap(false, true) {
		s.closeEarly()
	}
}

// finish marks s as read no more: the other stream's pump no longer reads
// it ahead (its writer may be closed once Run returns).
func (s *stream) finish() {
	if s.ord != nil {
		s.ord.mu.Lock()
		defer s.ord.mu.Unlock()
	}
	s.done = true
}
