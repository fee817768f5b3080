package runner

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/capwrap/capwrap/wrap"
)

// readerPoll is the slowest cadence at which a stream that can no longer
// be kept asks whether capwrap's stdout still has a reader: at most one
// poll(2) per readerPoll, and only while the capture discards.
const readerPoll = 50 * time.Millisecond

// pipeEnd stands in front of stream i's sink and ends what only capwrap
// keeps going (issue 26: `capwrap -- yes | head -1` ran for ever at 80 % of
// two cores): once the reader of capwrap's corresponding output has gone
// (gone) and nothing more of the stream can be kept (full: the capture
// reached --max-capture-bytes or the directory quota, or has stopped
// persisting), its Write returns wrap.ErrCloseStream, so that the command
// meets the end of its pipe (SIGPIPE, EPIPE) as `yes | head -1`'s left
// side does. closed is then set (Outcome.ReaderGone). full is asked
// first, after each write; gone only when full, at most every readerPoll.
type pipeEnd struct {
	w      io.Writer // the sink
	full   func() bool
	gone   func() bool
	closed *bool // set once, from the stream's pump; read after wrap.Run
	next   time.Time
	done   atomic.Bool
}

func (e *pipeEnd) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	return n, e.check(err)
}

// Stage and Commit pass a staged read on (wrap.Stager); Commit, which
// releases, asks what Write asks.
func (e *pipeEnd) Stage(p []byte) error {
	if st, ok := e.w.(wrap.Stager); ok {
		return st.Stage(p)
	}
	_, err := e.Write(p)
	return err
}

func (e *pipeEnd) Commit() error {
	if st, ok := e.w.(wrap.Stager); ok {
		return e.check(st.Commit())
	}
	return nil
}

// check returns err, or wrap.ErrCloseStream once nothing more of the
// stream can be kept and its reader has gone.
func (e *pipeEnd) check(err error) error {
	if e.done.Load() || !e.full() {
		return err
	}
	if now := time.Now(); now.After(e.next) {
		e.next = now.Add(readerPoll)
		if e.gone() {
			e.done.Store(true)
			*e.closed = true
			return wrap.ErrCloseStream
		}
	}
	return err
}

// streamWriter is what wrap gets for stream i (0 stdout, 1 stderr): the
// sink, behind a pipeEnd when capwrap can tell its reader has gone — in
// tee mode, the stream's live copy failed with EPIPE; in preview and quiet
// modes (stdout only, where the preview and receipt go), capwrap's stdout
// is a pipe that polls POLLERR or POLLHUP (its read end closed: Linux,
// FreeBSD; elsewhere nothing is detected, and the command runs on as
// before). A background job's streams are left alone.
func (r *run) streamWriter(i int) io.Writer {
	s := r.sinks[i]
	if r.cfg.Hooks != nil {
		return s
	}
	var gone func() bool
	switch {
	case s.live != nil:
		gone = s.live.broken
	case i == 0:
		gone = pipeReaderGone(r.cfg.Stdout)
	}
	if gone == nil {
		return s
	}
	return &pipeEnd{w: s, full: r.captureFull, gone: gone, closed: &r.out.ReaderGone}
}

// captureFull reports whether the capture keeps nothing more: it could not
// be made, or it no longer accepts bytes (store.Capture.Accepting). Not
// made yet, it will be at the next byte.
func (r *run) captureFull() bool {
	c, err := r.lazy.made()
	return err != nil || (c != nil && !c.Accepting())
}

// broken reports whether the live copy stopped at EPIPE: its reader has
// gone.
func (l *liveWriter) broken() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Is(l.err, syscall.EPIPE)
}

// pipeReaderGone returns a func that reports whether the pipe f writes to
// has lost its reader, or nil when f is not a pipe.
func pipeReaderGone(f *os.File) func() bool {
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return nil
	}
	rc, err := f.SyscallConn() // not Fd, which would make f blocking
	if err != nil {
		return nil
	}
	return func() bool {
		gone := false
		_ = rc.Control(func(fd uintptr) {
			fds := []unix.PollFd{{Fd: int32(fd)}} // no events: POLLERR and POLLHUP come unasked
			if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
				gone = fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
			}
		})
		return gone
	}
}

// readerGoneReason is process.reason when capwrap closed the command's
// stream (Outcome.ReaderGone).
const readerGoneReason = "the reader of capwrap's output went away and the capture was full: capwrap closed the command's pipe"
