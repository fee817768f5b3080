package store

import (
	"crypto/sha256"
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
	closing bool       // no more Writes: exit once the queue is written
	held    bool       // between Hold and Release: wake the writer for whole chunks only
	inWrite bool       // the writer goroutine is in a file write
	exited  bool       // the writer goroutine has returned

	kicked int64 // file offset up to which writeback was started (SyncAhead); the writer goroutine's
	synced int64 // file offset up to which a flush was asked for (SyncAhead); the writer goroutine's

	// The flusher (SyncAhead): started by the writer goroutine, which
	// closes flush as it exits; flushed is closed once the flusher has
	// returned, and flushErr (its first error) is then the reader's.
	flush    chan struct{}
	flushed  chan struct{}
	flushErr error

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
			for _, o := range c.streams {
				o.cond.Signal() // a held partial chunk is ready too: the queue is full
			}
			if !c.waitProgress(s.timer, c.lim.StallTimeout) && !c.stopped && c.queued >= c.lim.QueueBytes {
				c.stop(receipt.ReasonWriterStalled, nil)
			}
			continue
		}
		k := s.enqueue(data[:min(int64(len(data)), space)])
		c.queued += int64(k)
		c.accepted += int64(k)
		data = data[k:]
		if s.ready() {
			s.cond.Signal()
		}
	}
	if cut && c.accepting {
		// Everything up to the limit is queued; the rest is dropped, and
		// the writers go on writing what is queued.
		c.accepting = false
		c.setReason(receipt.ReasonCaptureLimit, nil)
	}
	return len(p), nil
}

// Hold makes the Writes that follow, until Release, wake the stream's file
// writer only once a whole chunk is queued, and the writer write only whole
// chunks; Release wakes it for the rest. A caller that hands on one read in
// several Writes (the redactor releases 64 KiB at a time) so costs the
// writer one wake-up and one file write per chunk, not one per Write: with
// a writer that kept up, a 150 MiB log took 2,400 wake-ups, each a futex
// hand-off and a 64 KiB write. Bytes held are queued and counted as any
// others (a full queue wakes the writers whatever the hold); what a Hold
// never Released is written when the stream closes. Hold and Release are
// for the goroutine that calls Write.
func (s *StreamWriter) Hold() {
	s.c.mu.Lock()
	s.held = true
	s.c.mu.Unlock()
}

// Release ends a Hold and wakes the file writer for what is queued.
func (s *StreamWriter) Release() {
	s.c.mu.Lock()
	s.held = false
	if len(s.chunks) > 0 {
		s.cond.Signal()
	}
	s.c.mu.Unlock()
}

// ready reports whether the writer goroutine has a chunk to write: any
// queued chunk, but during a Hold only a whole one (the last chunk is the
// one Writes append to) unless the queue is full (a Write waits for room).
// Caller holds c.mu.
func (s *StreamWriter) ready() bool {
	switch n := len(s.chunks); {
	case n == 0:
		return false
	case n > 1 || !s.held:
		return true
	}
	return len(s.chunks[0]) == cap(s.chunks[0]) || s.c.queued >= s.c.lim.QueueBytes
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
	if n := len(s.c.free); n > 0 {
		buf = s.c.free[n-1][:0]
		s.c.free = s.c.free[:n-1]
	} else {
		buf = s.c.newChunk()
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
		for !s.ready() && !s.closing && !c.stopped {
			s.cond.Wait()
		}
		if c.stopped || len(s.chunks) == 0 {
			for _, b := range s.chunks {
				c.queued -= int64(len(b))
			}
			s.chunks = nil
			if s.flush != nil {
				close(s.flush)
			}
			s.exited = true
			c.notifyProgress()
			return
		}
		buf := s.chunks[0]
		s.chunks[0] = nil
		s.chunks = s.chunks[1:]
		s.inWrite = true
		ahead := c.syncAhead
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
			done := s.committed.Add(int64(n))
			if ahead && done-s.kicked >= syncAheadBytes {
				startWriteback(s.file, s.kicked, done-s.kicked)
				s.kicked = done
			}
			if ahead && done-s.synced >= syncBehindBytes {
				s.flushBehind()
				s.synced = done
			}
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
		if cap(buf) == c.chunkBytes && len(c.free) < c.maxFree() {
			c.free = append(c.free, buf[:0])
		}
		c.notifyProgress()
	}
}

// syncAheadBytes is how many bytes a stream writes between two starts of
// their writeback (SyncAhead).
const syncAheadBytes = 8 << 20

// syncBehindBytes is how many bytes a stream writes between two fsyncs of
// its file on the flusher goroutine (SyncAhead).
const syncBehindBytes = 16 << 20

// flushBehind asks the stream's flusher goroutine, started at the first
// call, for an fsync of the file, without waiting for it; a request made
// while one is pending is one with it. Called by the writer goroutine.
func (s *StreamWriter) flushBehind() {
	if s.flush == nil {
		s.flush, s.flushed = make(chan struct{}, 1), make(chan struct{})
		go s.flusher()
	}
	select {
	case s.flush <- struct{}{}:
	default:
	}
}

// flusher is the goroutine of flushBehind: it fsyncs the file for each
// request until the writer goroutine closes s.flush, and keeps the first
// error for Finalize (an fsync error is reported once per open file: the
// final fsync would not see it again).
func (s *StreamWriter) flusher() {
	defer close(s.flushed)
	for range s.flush {
		if err := s.f.Sync(); err != nil && s.flushErr == nil {
			s.flushErr = err
		}
	}
}

// waitFlusher waits until the stream's flusher, if one was started, has
// returned, and returns its first error. Only once the writer goroutine
// has exited.
func (s *StreamWriter) waitFlusher() error {
	if s.flushed == nil {
		return nil
	}
	<-s.flushed
	return s.flushErr
}

// SyncAhead makes the stream writers start the writeback to disk of every
// syncAheadBytes they write as they go (Linux: sync_file_range, which does
// not wait), so that Finalize's fsync waits for the last few MiB only, not
// for the whole output at the end: a kept 150 MiB log's fsync took about
// 200 ms of the run on the test machine. For a capture that will be kept;
// a capture that will be discarded would write to disk what it deletes
// (files deleted before the kernel's own writeback never reach it).
func (c *Capture) SyncAhead() {
	c.mu.Lock()
	c.syncAhead = true
	c.mu.Unlock()
}

// writeHashed writes b to the stream's file and adds to the hash exactly the
// bytes the file got; it returns their number (0 <= n <= len(b)) and the
// write's error. The hash runs here, on the writer goroutine, after the
// write: the chunk is in the cache the kernel's copy just read it through,
// and the pipe reader never waits for it. (Hashing on a goroutine of its
// own while the kernel copied cost a goroutine start and a wake-up per
// chunk, and a run already keeps both cores busy: the pipe reader and
// redactor on one, the command and this writer on the other.)
func (s *StreamWriter) writeHashed(b []byte) (int, error) {
	n, err := s.f.Write(b)
	if n < 0 || n > len(b) {
		n = 0
	}
	s.hash.Write(b[:n])
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

// slabAfter is how many chunk buffers a capture takes from the Go heap
// before it maps a slab for the others (newChunk): an output that fits in
// them costs no mapping, and no huge page either.
const slabAfter = 2

// newChunk returns an empty chunk buffer of c.chunkBytes capacity. Past the
// first slabAfter, a writer that lags (the queue grows towards QueueBytes)
// gets them from one slab of maxFree chunks mapped outside the Go heap in
// huge pages where the system has them (mapSlab): filling an 8 MiB queue of
// fresh 4 KiB pages cost 2,048 page faults, 35–150 ms on the 2-core test
// machine, on the pipe reader's path. Beyond the slab, and where it cannot
// be had, chunks come from the heap. Caller holds c.mu.
func (c *Capture) newChunk() []byte {
	c.made++
	if c.made > slabAfter {
		if c.slab == nil && !c.slabTried {
			c.slabTried = true
			c.slab = mapSlab(c.maxFree() * c.chunkBytes)
		}
		if off := c.slabUsed; off+c.chunkBytes <= len(c.slab) {
			c.slabUsed += c.chunkBytes
			return c.slab[off:off:(off + c.chunkBytes)]
		}
	}
	return make([]byte, 0, c.chunkBytes)
}

// dropSlab unmaps the slab once no writer goroutine can hold one of its
// chunks (a write stuck in the kernel keeps it mapped: a leak, not a
// fault), after clearing every reference to it: a Write that comes after
// all (a misuse) gets a chunk from the heap.
func (c *Capture) dropSlab() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slab == nil {
		return
	}
	for _, s := range c.streams {
		if !s.exited {
			return
		}
	}
	for _, s := range c.streams {
		s.chunks = nil
	}
	c.free = nil
	unmapSlab(c.slab)
	c.slab, c.slabUsed = nil, 0
}

// maxFree is how many spare chunk buffers the capture keeps for its two
// streams: as many as the queue holds, so that a run whose writer lags
// allocates its chunks once and then reuses them, most recently written
// first (a fresh buffer costs a page fault per 4 KiB and its clearing; a
// 150 MiB log made 600 of them), and the memory stays what a full queue
// takes anyway. Caller holds c.mu.
func (c *Capture) maxFree() int {
	return int(c.lim.QueueBytes/int64(c.chunkBytes)) + 1
}
