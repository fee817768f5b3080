package store

import (
	"crypto/sha256"
	"encoding"
	"fmt"
	"github.com/capwrap/capwrap/receipt"
	"hash"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// fileWriter is what a stream writes to: the .live file, or a
// fault-injecting wrapper in tests.
type fileWriter interface {
	Write(p []byte) (int, error)
	Sync() error
	Close() error
}

// StreamWriter is the io.Writer for one stream of a capture. Write copies
// the bytes into a bounded queue (Limits.QueueBytes, both streams together;
// an empty queue takes at least one chunk of 64 KiB) that a goroutine of
// its own writes to the stream's .live file in large
// writes; the caller never does a file write. Write is meant for one
// goroutine per stream (the pipe reader).
type StreamWriter struct {
	c    *Capture
	name string
	file *os.File
	f    fileWriter

	// Guarded by c.mu.
	cond    *sync.Cond // wakes the writer goroutine
	chunks  [][]byte   // queued bytes, oldest first; the last one is appended to
	free    [][]byte   // spare chunk buffers
	closing bool       // no more Writes: exit once the queue is written
	inWrite bool       // the writer goroutine is in a file write
	exited  bool       // the writer goroutine has returned

	committed atomic.Int64
	hash      hash.Hash // owned by the writer goroutine until it exits
	sum       string    // set by Finalize
	timer     *time.Timer
}

func newStreamWriter(c *Capture, name string, file *os.File, f fileWriter) *StreamWriter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &StreamWriter{c: c, name: name, file: file, f: f, cond: sync.NewCond(&c.mu), hash: sha256.New(), timer: t}
}

// Write queues p for the stream's file and always returns len(p), nil: a
// capture that cannot persist never fails nor blocks its caller for long.
// When the queue is full Write waits for the file writer (back-pressure); if
// the writer makes no progress for Limits.StallTimeout, persistence stops
// with reason writer_stalled and Write returns at once from then on. Bytes
// beyond Limits.MaxCaptureBytes are discarded (reason capture_limit). Write
// must not be called after Finalize or Discard; such bytes are discarded.
func (s *StreamWriter) Write(p []byte) (int, error) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.accepting || len(p) == 0 {
		return len(p), nil
	}
	data, cut := p, false
	if max := c.lim.MaxCaptureBytes; max > 0 && int64(len(data)) > max-c.accepted {
		data, cut = data[:max-c.accepted], true
	}
	for len(data) > 0 && !c.stopped {
		space := c.lim.QueueBytes - c.queued
		if c.queued == 0 {
			// An empty queue takes a whole chunk, however small
			// QueueBytes is: a queue of one byte would otherwise cost
			// a file write and a hand-over per byte.
			space = max(space, int64(c.chunkBytes))
		}
		if space <= 0 {
			if !c.waitProgress(s.timer, c.lim.StallTimeout) && !c.stopped && c.queued >= c.lim.QueueBytes {
				c.stop(receipt.ReasonWriterStalled, nil)
			}
			continue
		}
		k := s.enqueue(data[:min(int64(len(data)), space)])
		c.queued += int64(k)
		c.accepted += int64(k)
		data = data[k:]
		s.cond.Signal()
	}
	if cut && c.accepting {
		// Everything up to the limit is queued; the rest is dropped, and
		// the writers go on writing what is queued.
		c.accepting = false
		c.setReason(receipt.ReasonCaptureLimit, nil)
	}
	return len(p), nil
}

// enqueue copies as much of p as fits in the tail chunk (or a new one) and
// returns the number of bytes copied. Caller holds c.mu.
func (s *StreamWriter) enqueue(p []byte) int {
	size := s.c.chunkBytes
	if n := len(s.chunks); n > 0 {
		tail := s.chunks[n-1]
		if room := cap(tail) - len(tail); room > 0 {
			k := min(room, len(p))
			s.chunks[n-1] = append(tail, p[:k]...)
			return k
		}
	}
	var buf []byte
	if n := len(s.free); n > 0 {
		buf = s.free[n-1][:0]
		s.free = s.free[:n-1]
	} else {
		buf = make([]byte, 0, size)
	}
	k := min(size, len(p))
	s.chunks = append(s.chunks, append(buf, p[:k]...))
	return k
}

// run is the writer goroutine: it writes queued chunks to the file, one
// write per chunk, until the stream is closed or persistence stops.
func (s *StreamWriter) run() {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for len(s.chunks) == 0 && !s.closing && !c.stopped {
			s.cond.Wait()
		}
		if c.stopped || len(s.chunks) == 0 {
			for _, b := range s.chunks {
				c.queued -= int64(len(b))
			}
			s.chunks = nil
			s.exited = true
			c.notifyProgress()
			return
		}
		buf := s.chunks[0]
		s.chunks[0] = nil
		s.chunks = s.chunks[1:]
		s.inWrite = true
		c.mu.Unlock()

		allowed, qerr := len(buf), error(nil)
		if c.lim.DirQuota > 0 {
			var a int64
			a, qerr = c.reserve(int64(len(buf)))
			allowed = int(a)
		}
		n, err := 0, error(nil)
		if allowed > 0 {
			n, err = s.writeHashed(buf[:allowed])
			s.committed.Add(int64(n))
		}

		c.mu.Lock()
		s.inWrite = false
		c.queued -= int64(len(buf))
		switch {
		case qerr != nil:
			c.stop(writeReason(qerr), qerr)
		case err != nil:
			c.stop(writeReason(err), s.writeError(err))
		case allowed < len(buf):
			c.stop(receipt.ReasonDirectoryQuota, nil)
		}
		if len(s.free) < 2 && cap(buf) == c.chunkBytes {
			s.free = append(s.free, buf[:0])
		}
		c.notifyProgress()
	}
}

// parallelHashMin is the smallest chunk, in bytes, hashed on a goroutine of
// its own while it is written; a smaller one costs less to hash in line than
// to hand over (many small writes make many small chunks).
const parallelHashMin = 64 << 10

// writeHashed writes b to the stream's file and adds to the hash exactly the
// bytes the file got; it returns their number (0 <= n <= len(b)) and the
// write's error. A large chunk is hashed while the kernel copies it into the
// file, so the two run on different cores; a short write then rewinds the
// hash (its state taken before) to what the file got.
func (s *StreamWriter) writeHashed(b []byte) (int, error) {
	if len(b) < parallelHashMin {
		n, err := s.f.Write(b)
		if n < 0 || n > len(b) {
			n = 0
		}
		s.hash.Write(b[:n])
		return n, err
	}
	before, _ := s.hash.(encoding.BinaryMarshaler).MarshalBinary()
	hashed := make(chan struct{})
	go func() {
		s.hash.Write(b)
		close(hashed)
	}()
	n, err := s.f.Write(b)
	if n < 0 || n > len(b) {
		n = 0
	}
	<-hashed
	if n < len(b) {
		if uerr := s.hash.(encoding.BinaryUnmarshaler).UnmarshalBinary(before); uerr != nil {
			panic(uerr) // sha256's own state: cannot fail
		}
		s.hash.Write(b[:n])
	}
	return n, err
}

// writeError names the stream file as the user sees it (the file was
// opened under the capture's temporary directory name) and keeps the cause,
// e.g. "write tool-outputs/<ID>/stdout.live: no space left on device".
func (s *StreamWriter) writeError(err error) error {
	return fmt.Errorf("write %s: %w", filepath.Join(s.c.Path(), s.name+liveSuffix), UnwrapPath(err))
}

// Committed returns the number of bytes written to the stream's file so far
// (exact: it counts the bytes of a short write that the kernel accepted).
func (s *StreamWriter) Committed() int64 { return s.committed.Load() }
