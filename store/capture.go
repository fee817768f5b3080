package store

import (
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/capwrap/capwrap/receipt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Stream names accepted by [Capture.Stream] and used in file names.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// Names inside a capture directory (SPEC §4).
const (
	liveSuffix       = ".live"
	logSuffix        = ".log"
	receiptName      = "receipt.json"
	liveReceiptName  = "receipt.live.json"
	reservationName  = "reservation"   // directory quota reserved by a running capture, decimal bytes
	spaceName        = "receipt.space" // space set aside for receipt.json on a full disk (receiptspace.go)
	maxCreateRetries = 8
)

// KilledNote is the name, inside a capture directory, of the note that
// capwrap's watchdog leaves when capwrap died while the command ran and
// the watchdog is about to end the command's process group (SPEC §3). The
// store never writes it: the runner tells the watchdog this name and
// [Capture.AbsPath]. A capture without receipt.json that holds it reads as
// partial (killed_with_capwrap) instead of partial (abandoned) ([Entry]).
// It is a few bytes of text and not charged to the directory quota, like
// the receipts.
const KilledNote = "killed.txt"

// Defaults of SPEC §4 "Limits".
const (
	DefaultMaxCaptureBytes = 32 << 20
	DefaultDirQuota        = 128 << 20
	DefaultQueueBytes      = 8 << 20
	DefaultStallTimeout    = 10 * time.Second
	defaultQuotaChunk      = 1 << 20
)

// The queue's chunks: one file write each, QueueBytes bytes but at least
// minChunkBytes and at most maxChunkBytes.
const (
	minChunkBytes = 64 << 10
	maxChunkBytes = 256 << 10
)

// Limits bound what one capture keeps (SPEC §4 "Limits"). Sizes are in
// bytes.
type Limits struct {
	// MaxCaptureBytes is the number of bytes retained per capture, both
	// streams together; 0 means no limit. Reaching it makes the capture
	// partial with reason capture_limit.
	MaxCaptureBytes int64
	// DirQuota is the number of bytes retained by all captures in the
	// tool-outputs directory; 0 means no limit. Reaching it makes the
	// capture partial with reason directory_quota.
	DirQuota int64
	// QueueBytes bounds the bytes queued between StreamWriter.Write and the
	// file writer, both streams together; 0 means DefaultQueueBytes. An
	// empty queue always takes one chunk (QueueBytes clamped to 64 KiB ..
	// 256 KiB), so a smaller QueueBytes costs speed, never bytes.
	QueueBytes int64
	// StallTimeout is how long a full queue waits for the file writer to
	// make progress before persistence stops with reason writer_stalled;
	// 0 means DefaultStallTimeout.
	StallTimeout time.Duration
	// QuotaChunk is the number of bytes of directory quota reserved at a
	// time; 0 means defaultQuotaChunk. Concurrent captures respect DirQuota
	// exactly; the chunk only sets how often the ledger is rebuilt.
	QuotaChunk int64
}

// DefaultLimits returns the limits of SPEC §4.
func DefaultLimits() Limits {
	return Limits{
		MaxCaptureBytes: DefaultMaxCaptureBytes,
		DirQuota:        DefaultDirQuota,
		QueueBytes:      DefaultQueueBytes,
		StallTimeout:    DefaultStallTimeout,
		QuotaChunk:      defaultQuotaChunk,
	}
}

func (l Limits) withDefaults() Limits {
	if l.QueueBytes <= 0 {
		l.QueueBytes = DefaultQueueBytes
	}
	if l.StallTimeout <= 0 {
		l.StallTimeout = DefaultStallTimeout
	}
	if l.QuotaChunk <= 0 {
		l.QuotaChunk = defaultQuotaChunk
	}
	if l.MaxCaptureBytes < 0 {
		l.MaxCaptureBytes = 0
	}
	if l.DirQuota < 0 {
		l.DirQuota = 0
	}
	return l
}

// Capture is one capture directory being written (SPEC §4). Create it with
// [Dir.Create]; write through [Capture.Stream]; end it with
// [Capture.Finalize] then [Capture.Publish], or with [Capture.Discard]. It
// holds an exclusive flock on its directory from Create until Publish or
// Discard, which is how readers tell running from abandoned.
type Capture struct {
	d    *Dir
	id   string
	lim  Limits
	root *os.Root // the capture directory
	dirf *os.File // the capture directory, opened for flock, renames and fsync

	mu         sync.Mutex
	accepting  bool  // Write still takes bytes
	stopped    bool  // persistence over: writers drop what is queued
	accepted   int64 // bytes accepted into the queues, both streams
	queued     int64 // bytes in the queues or being written
	reason     receipt.Reason
	errText    string
	progress   chan struct{} // closed and replaced whenever a file write ends
	drained    bool          // drain has run: the writers are done
	finalized  bool
	released   bool
	result     Result
	streams    [2]*StreamWriter
	receiptMu  sync.Mutex // one receipt write at a time (fixed temp names)
	quotaMu    sync.Mutex // guards reserved, granted
	resFile    *os.File   // the reservation file, once created
	reserved   int64      // directory quota recorded in the reservation file
	granted    int64      // part of reserved handed to the writers
	chunkBytes int
	free       [][]byte // spare chunk buffers of the streams, guarded by mu (maxFree)
	made       int      // chunk buffers made, guarded by mu (newChunk)
	slab       []byte   // where chunks past slabAfter come from; nil: none (yet)
	slabUsed   int      // bytes of slab handed out as chunks
	slabTried  bool     // mapSlab was called
	syncAhead  bool     // start writeback as the streams go, guarded by mu (SyncAhead)
	space      *os.File // receipt.space, nil when it could not be made
}

// Result is what [Capture.Finalize] reports for the receipt's "capture"
// object and per-stream fields (SPEC §7).
type Result struct {
	// State is "complete" or "partial".
	State receipt.CaptureState
	// Reason is nil when complete; else capture_limit, directory_quota,
	// writer_stalled or write_error.
	Reason *receipt.Reason
	// Error is the text of the write error (write_error only), else nil.
	Error  *string
	Stdout StreamResult
	Stderr StreamResult
}

// StreamResult describes one stream file after Drain or Finalize.
type StreamResult struct {
	// Committed is the number of bytes written to the file.
	Committed int64
	// SHA256 is the hex digest of the committed bytes, computed as they
	// were written; "" when a stalled write never returned.
	SHA256 string
	// File is the stream file's path, relative like Dir.Path: the .log name
	// once Finalize renamed it, else the .live name.
	File string
}

// Create makes a new capture directory in d (SPEC §4) for a run started at
// now, with stdout.live and stderr.live created empty, 0600, exclusively. The
// directory is set up under a temporary dot-name, locked, then renamed to its
// ID, so readers never see a half-made capture. Errors come from the file
// system (the caller decides whether to run without a capture).
func (d *Dir) Create(now time.Time, lim Limits) (*Capture, error) {
	lim = lim.withDefaults()
	read := cryptoRand.Read
	if d.random != nil {
		read = d.random
	}
	var lastErr error
	for range maxCreateRetries {
		id, err := newID(now, readerFunc(read))
		if err != nil {
			return nil, err
		}
		c, err := d.create(id, lim)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, errIDTaken) {
			return nil, err
		}
		lastErr = err
	}
	return nil, fmt.Errorf("create capture: %w", lastErr)
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// errIDTaken reports that a fresh ID collided with an existing name.
var errIDTaken = errors.New("capture id already in use")

func (d *Dir) create(id string, lim Limits) (_ *Capture, err error) {
	tmp := tmpDirPrefix + id
	if _, err := d.root.Lstat(id); err == nil {
		return nil, fmt.Errorf("capture %s: %w", id, errIDTaken)
	}
	if err := d.root.Mkdir(tmp, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("capture %s: %w", id, errIDTaken)
		}
		return nil, err
	}
	c := &Capture{d: d, id: id, lim: lim, accepting: true, progress: make(chan struct{})}
	defer func() {
		if err != nil {
			c.closeFiles()
			if c.space != nil {
				c.space.Close()
			}
			if c.dirf != nil {
				c.dirf.Close()
			}
			if c.root != nil {
				c.root.Close()
			}
			d.root.RemoveAll(tmp)
		}
	}()
	if d.afterMkdir != nil {
		d.afterMkdir(tmp)
	}
	lfi, err := d.root.Lstat(tmp)
	if err != nil {
		return nil, err
	}
	if c.root, err = d.root.OpenRoot(tmp); err != nil {
		return nil, err
	}
	if c.dirf, err = c.root.Open("."); err != nil {
		return nil, err
	}
	dfi, err := c.dirf.Stat()
	if err != nil {
		return nil, err
	}
	if !lfi.IsDir() || !os.SameFile(lfi, dfi) {
		return nil, fmt.Errorf("capture directory %s changed while being created; refusing it", tmp)
	}
	if err := c.dirf.Chmod(0o700); err != nil {
		return nil, err
	}
	if err := flock(c.dirf, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return nil, fmt.Errorf("lock capture directory: %w", err)
	}
	c.chunkBytes = int(min(max(lim.QueueBytes, minChunkBytes), maxChunkBytes))
	for i, name := range []string{Stdout, Stderr} {
		f, err := c.root.OpenFile(name+liveSuffix, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, err
		}
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, err
		}
		var w fileWriter = f
		if d.wrapFile != nil {
			w = d.wrapFile(name, f)
		}
		c.streams[i] = newStreamWriter(c, name, f, w)
	}
	c.space = makeSpace(c.root)
	if err := renameNoReplace(d.root, d.dirf, tmp, id); err != nil {
		if errors.Is(err, os.ErrExist) {
			err = fmt.Errorf("capture %s: %w", id, errIDTaken)
		}
		return nil, err
	}
	for _, s := range c.streams {
		go s.run()
	}
	return c, nil
}

// ID returns the capture ID, e.g. "20261130T030612Z-k3j4h5g6x2".
func (c *Capture) ID() string { return c.id }

// Dir returns the tool-outputs directory that holds the capture.
func (c *Capture) Dir() *Dir { return c.d }

// Path returns the capture directory relative like [Dir.Path], e.g.
// "tool-outputs/<ID>".
func (c *Capture) Path() string { return filepath.Join(c.d.path, c.id) }

// AbsPath returns the absolute path of the capture directory.
func (c *Capture) AbsPath() string { return filepath.Join(c.d.abs, c.id) }

// FilePath returns the final (.log) path of stream "stdout" or "stderr",
// relative like [Dir.Path].
func (c *Capture) FilePath(stream string) string {
	return filepath.Join(c.Path(), stream+logSuffix)
}

// Stalled is the capture's result when a step on it (Drain, Finalize,
// Publish) has made no progress for the stall timeout and was given up:
// partial, reason writer_stalled, the error's text, the bytes committed so
// far and the .live names. It is known without touching the file system
// or taking the capture's lock, which the hung step may hold.
func (c *Capture) Stalled(err error) Result {
	res := Result{State: receipt.CapturePartial, Reason: new(receipt.ReasonWriterStalled)}
	if err != nil {
		res.Error = new(err.Error())
	}
	for _, s := range c.streams {
		res.setStream(s.name, StreamResult{Committed: s.committed.Load(), File: filepath.Join(c.Path(), s.name+liveSuffix)})
	}
	return res
}

// Stream returns the writer of "stdout" or "stderr"; it panics on any other
// name (a programming error).
func (c *Capture) Stream(name string) *StreamWriter {
	switch name {
	case Stdout:
		return c.streams[0]
	case Stderr:
		return c.streams[1]
	}
	panic("store: unknown stream " + name)
}

// WriteLiveReceipt publishes r as receipt.live.json (SPEC §4): written to a
// temporary name in the capture directory, 0600, fsynced, renamed over the
// previous one. It may be called any number of times before Publish.
func (c *Capture) WriteLiveReceipt(r *receipt.Receipt) error {
	b, err := r.MarshalPretty()
	if err != nil {
		return err
	}
	c.receiptMu.Lock()
	defer c.receiptMu.Unlock()
	if c.isReleased() {
		return errors.New("capture already published or discarded")
	}
	return writeAtomic(c.root, c.dirf, liveReceiptName, b, false)
}

// writeReason is the capture reason for a failed write: disk_full when
// the file system is full or the user's disk quota on it is used up
// (ENOSPC, EDQUOT), else write_error.
func writeReason(err error) receipt.Reason {
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		return receipt.ReasonDiskFull
	}
	return receipt.ReasonWriteError
}

// setReason records why persistence stopped or will stop. The first reason
// wins, except that a write error (disk_full too) replaces capture_limit:
// it lost bytes the limit would have kept. Caller holds c.mu.
func (c *Capture) setReason(reason receipt.Reason, err error) {
	if reason == "" {
		return
	}
	lost := reason == receipt.ReasonWriteError || reason == receipt.ReasonDiskFull
	if c.reason == "" || (lost && c.reason == receipt.ReasonCaptureLimit) {
		c.reason = reason
		if err != nil {
			c.errText = err.Error()
		}
	}
}

// stop ends persistence: Write discards from now on and the writers drop
// whatever is queued. Caller holds c.mu.
func (c *Capture) stop(reason receipt.Reason, err error) {
	c.setReason(reason, err)
	c.accepting = false
	if c.stopped {
		return
	}
	c.stopped = true
	for _, s := range c.streams {
		s.cond.Broadcast()
	}
	c.notifyProgress()
}

// notifyProgress wakes whoever waits for the writers. Caller holds c.mu.
func (c *Capture) notifyProgress() {
	close(c.progress)
	c.progress = make(chan struct{})
}

// waitProgress waits, with c.mu held on entry and exit, until the writers
// report progress or timeout passes; it reports whether progress came.
func (c *Capture) waitProgress(t *time.Timer, timeout time.Duration) bool {
	ch := c.progress
	c.mu.Unlock()
	t.Reset(timeout)
	var ok bool
	select {
	case <-ch:
		ok = true
		t.Stop() // since Go 1.23 no stale tick survives Stop or Reset
	case <-t.C:
	}
	c.mu.Lock()
	return ok
}

// Drain waits until everything queued has been written to the .live files
// (giving up with writer_stalled when the writer makes no progress for the
// stall timeout) and returns the capture's state so far, with the .live
// names as File. It neither fsyncs nor renames: a caller that may discard
// the capture (--keep auto on a compact success) calls Drain, decides, then
// calls Finalize and Publish, or Discard, without paying for an fsync of
// files about to be deleted. The caller must have stopped writing.
func (c *Capture) Drain() Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.drained {
		c.drain()
	}
	res := c.stateLocked()
	for _, s := range c.streams {
		sr := StreamResult{Committed: s.committed.Load(), File: filepath.Join(c.Path(), s.name+liveSuffix)}
		if s.exited {
			sr.SHA256 = hex.EncodeToString(s.hash.Sum(nil))
		}
		res.setStream(s.name, sr)
	}
	return res
}

func (r *Result) setStream(name string, sr StreamResult) {
	if name == Stdout {
		r.Stdout = sr
	} else {
		r.Stderr = sr
	}
}

// stateLocked returns the Result's State, Reason and Error. Caller holds
// c.mu.
func (c *Capture) stateLocked() Result {
	res := Result{State: receipt.CaptureComplete}
	if c.reason != "" {
		res.State = receipt.CapturePartial
		reason := c.reason
		res.Reason = &reason
		if c.errText != "" {
			e := c.errText
			res.Error = &e
		}
	}
	return res
}

// Finalize ends the streams (SPEC §4 "Finalization order"): the caller has
// stopped writing to them; Finalize drains the queues as [Capture.Drain]
// does, fsyncs and closes the .live files, renames them to .log (refusing
// to replace anything found at the .log names) and fsyncs the capture
// directory. It returns the capture's state with per-stream committed bytes
// and SHA-256; an fsync or close failure makes the capture partial with
// reason write_error. The error reports a failed rename (the Result is
// still valid and names the .live file) or a second call.
func (c *Capture) Finalize() (Result, error) {
	c.mu.Lock()
	if c.finalized || c.released {
		c.mu.Unlock()
		return c.result, errors.New("capture already finalized")
	}
	c.finalized = true
	if !c.drained {
		c.drain()
	}
	c.mu.Unlock()

	var renameErr error
	var streams [2]StreamResult
	for i, s := range c.streams {
		c.mu.Lock()
		stuck := !s.exited
		c.mu.Unlock()
		live := filepath.Join(c.Path(), s.name+liveSuffix)
		if !stuck {
			err := s.waitFlusher()
			if serr := s.f.Sync(); err == nil {
				err = serr
			}
			if err != nil {
				err = fmt.Errorf("fsync %s: %w", live, UnwrapPath(err))
			}
			if cerr := s.f.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("close %s: %w", live, UnwrapPath(cerr))
			}
			if err != nil {
				c.mu.Lock()
				c.setReason(writeReason(err), err)
				c.mu.Unlock()
			}
			s.sum = hex.EncodeToString(s.hash.Sum(nil))
		}
		streams[i] = StreamResult{Committed: s.committed.Load(), SHA256: s.sum, File: live}
		if err := renameNoReplace(c.root, c.dirf, s.name+liveSuffix, s.name+logSuffix); err != nil {
			renameErr = errors.Join(renameErr, err)
		} else {
			streams[i].File = c.FilePath(s.name)
		}
	}
	if err := c.dirf.Sync(); err != nil && renameErr == nil {
		renameErr = fmt.Errorf("fsync capture directory: %w", err)
	}
	c.mu.Lock()
	if renameErr != nil {
		// The files are not where the receipt would say (the directory
		// was removed under capwrap, say): the capture is not complete.
		c.setReason(receipt.ReasonWriteError, renameErr)
	}
	c.result = c.stateLocked()
	c.result.Stdout, c.result.Stderr = streams[0], streams[1]
	res := c.result
	c.mu.Unlock()
	return res, renameErr
}

// UnwrapPath drops an *fs.PathError's operation and (possibly temporary)
// path, keeping the cause: for messages that name the path already.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Publish writes r as receipt.json (temporary name, 0600, fsync, rename that
// refuses to replace an existing name, directory fsync), the last step of
// SPEC §4's finalization order, then releases the capture's lock. Call it
// after Finalize. On error the lock is still released: the capture then
// reads as abandoned.
func (c *Capture) Publish(r *receipt.Receipt) error {
	c.mu.Lock()
	finalized := c.finalized
	c.mu.Unlock()
	if !finalized {
		return errors.New("publish before finalize")
	}
	b, err := r.MarshalPretty()
	if err != nil {
		c.release()
		return err
	}
	c.receiptMu.Lock()
	if c.isReleased() {
		c.receiptMu.Unlock()
		return errors.New("capture already published or discarded")
	}
	if c.d.publishFault != nil {
		err = c.d.publishFault()
	} else {
		err = writeAtomic(c.root, c.dirf, receiptName, b, true)
	}
	if err != nil && writeReason(err) == receipt.ReasonDiskFull && c.space != nil {
		// The disk is full (the capture is partial, disk_full, most
		// likely): the receipt goes into the space set aside for it.
		err = c.publishInSpace(r)
	}
	c.dropSpace()
	if err == nil {
		// receipt.json supersedes the launch-time receipt; leaving a
		// "running" receipt beside a final one would only mislead.
		_ = c.root.Remove(liveReceiptName)
		err = c.dirf.Sync()
	}
	c.receiptMu.Unlock()
	c.root.Remove(reservationName)
	c.release()
	return err
}

// Discard removes the capture directory and everything in it (--keep never,
// or --keep auto on a compact success), then releases the lock. Streams not
// yet finalized are stopped first; Discard needs no Finalize.
func (c *Capture) Discard() error {
	c.mu.Lock()
	if c.released {
		c.mu.Unlock()
		return errors.New("capture already published or discarded")
	}
	if !c.drained {
		c.stop("", nil)
		c.drain()
	}
	c.mu.Unlock()
	c.closeFiles()
	c.receiptMu.Lock()
	c.dropSpace()
	c.receiptMu.Unlock()
	err := c.d.root.RemoveAll(c.id)
	c.release()
	return err
}

// drain marks the capture drained, closes the queues and waits until
// every writer goroutine has exited, except one stuck in a file write after
// persistence stopped. A writer without progress for the stall timeout
// stops persistence with reason writer_stalled. Caller holds c.mu.
func (c *Capture) drain() {
	c.drained = true
	c.accepting = false
	for _, s := range c.streams {
		s.closing = true
		s.cond.Broadcast()
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		busy := false
		for _, s := range c.streams {
			if !s.exited && !(c.stopped && s.inWrite) {
				busy = true
			}
		}
		if !busy {
			return
		}
		if !c.waitProgress(t, c.lim.StallTimeout) && !c.stopped {
			c.stop(receipt.ReasonWriterStalled, nil)
		}
	}
}

// closeFiles closes the stream files whose writer has exited.
func (c *Capture) closeFiles() {
	for _, s := range c.streams {
		if s == nil {
			continue
		}
		c.mu.Lock()
		busy := s.inWrite
		c.mu.Unlock()
		if !busy {
			s.file.Close()
		}
	}
}

func (c *Capture) isReleased() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.released
}

// release drops the capture's lock and its directory handles.
func (c *Capture) release() {
	c.mu.Lock()
	if c.released {
		c.mu.Unlock()
		return
	}
	c.released = true
	c.mu.Unlock()
	c.dropSlab()
	c.quotaMu.Lock()
	if c.resFile != nil {
		c.resFile.Close()
	}
	c.quotaMu.Unlock()
	c.receiptMu.Lock()
	if c.space != nil {
		c.space.Close()
		c.space = nil
	}
	c.receiptMu.Unlock()
	c.dirf.Close() // closing the last descriptor drops the flock
	c.root.Close()
}
