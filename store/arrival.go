package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// The arrival index (issue 5, SPEC §8 `capwrap read --interleaved`).
//
// Each capture directory may hold arrival.idx, 0600, created exclusively
// through the capture's os.Root. It records the order in which chunks of
// sanitized output arrived at capwrap, stream by stream: the order of
// arrival at capwrap, chunk by chunk, not an order the command guaranteed.
//
// Layout, little-endian:
//
//	header  16 bytes   "capwrap-arr1\x00\x00\x00\x00" magic (12 bytes + 4 zero)
//	record  24 bytes   offset   uint64  byte offset of the chunk in its stream file
//	                   length   uint32  bytes in the chunk
//	                   stream   uint8   0 stdout, 1 stderr, 0xFF end of index (full)
//	                   pad      3 bytes zero
//	                   elapsed  int64   nanoseconds from the start of the capture
//
// Consecutive chunks of the same stream that arrive within
// arrivalCoalesce of the record's first chunk extend that record (its
// length is rewritten in place), so the index grows with the number of
// times the output switches streams, not with the number of writes. It
// holds at most MaxArrivalRecords records (24 bytes each, 1.5 MiB); a
// full index ends with a record of stream 0xFF and the rest of the output
// is not indexed.
//
// The index is charged to the directory quota (Limits.DirQuota) like the
// stream files: its writer reserves each growth of the file before writing
// it, the ledger counts the file, and where the quota has no room for
// more the index stops after the last whole record that fits, without an
// end record (a reader then finds an index that ends before the output,
// as after a crash). It is not charged to Limits.MaxCaptureBytes, which
// counts the streams' bytes only: a capture takes at most MaxCaptureBytes
// plus 1.5 MiB of index plus its receipts.
const (
	arrivalName       = "arrival.idx"
	arrivalMagic      = "capwrap-arr1\x00\x00\x00\x00"
	arrivalHeaderSize = 16
	arrivalRecordSize = 24
	arrivalEndMark    = 0xFF
	arrivalCoalesce   = time.Second
	arrivalCloseWait  = 5 * time.Second

	// MaxArrivalRecords bounds the records of one arrival index (SPEC §8):
	// 65,536 records of 24 bytes.
	MaxArrivalRecords = 1 << 16
)

// ArrivalRecord is one entry of the arrival index: Length bytes of Stream
// ("stdout" or "stderr") starting at byte Offset of its file, received
// Elapsed after the capture started.
type ArrivalRecord struct {
	Stream  string
	Offset  int64
	Length  int64
	Elapsed time.Duration
}

type arrivalRec struct {
	stream  uint8
	offset  int64
	length  int64
	elapsed time.Duration
}

func (r arrivalRec) encode(b []byte) {
	binary.LittleEndian.PutUint64(b[0:8], uint64(r.offset))
	binary.LittleEndian.PutUint32(b[8:12], uint32(r.length))
	b[12] = r.stream
	b[13], b[14], b[15] = 0, 0, 0
	binary.LittleEndian.PutUint64(b[16:24], uint64(r.elapsed))
}

// Arrival writes a capture's arrival index. Create it with
// [Capture.Arrival]; feed it through the writers of [Arrival.Writer],
// placed right after the redactor so offsets are those of the sanitized
// stream file; Close it after the last write, before [Capture.Finalize].
// The methods of a nil *Arrival do nothing, so a capture whose index could
// not be created runs on without one.
//
// Write never does file I/O: records are kept in memory and a goroutine
// of the Arrival writes them, so a slow disk never blocks the pipe
// reader. A write error ends the index (what was written stays valid).
type Arrival struct {
	f       *os.File
	start   time.Time
	reserve func(n int64) (int64, error) // directory quota; nil without one
	size    int64                        // bytes of the file, charged to the quota; owned by run

	mu      sync.Mutex
	off     [2]int64     // bytes seen per stream
	recs    []arrivalRec // records from file index base on; the last may still grow
	base    int          // file index of recs[0]
	n       int          // records in the index, written or not
	dirty   bool         // recs holds something not yet written
	holds   int          // open Holds: records wait for the last Release
	stopped bool         // full, failed or closed: no more records
	closed  bool
	err     error

	wake chan struct{}
	done chan struct{}
}

// Arrival creates the capture's arrival index, arrival.idx (0600,
// exclusively), and starts its writer goroutine; start is the time the
// records' Elapsed counts from. The caller must Close it. When the
// directory quota has no room left even for the index's header, Arrival
// creates nothing and returns a nil *Arrival and no error: the capture
// runs on without an index (its streams are at the quota too).
func (c *Capture) Arrival(start time.Time) (*Arrival, error) {
	var reserve func(int64) (int64, error)
	if c.lim.DirQuota > 0 {
		reserve = c.reserve
		n, err := reserve(arrivalHeaderSize)
		if err != nil {
			return nil, err
		}
		if n < arrivalHeaderSize {
			return nil, nil
		}
	}
	f, err := c.root.OpenFile(arrivalName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.WriteAt([]byte(arrivalMagic), 0); err != nil {
		f.Close()
		return nil, err
	}
	a := &Arrival{f: f, start: start, reserve: reserve, size: arrivalHeaderSize, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go a.run()
	return a, nil
}

// Writer returns the io.Writer that records the chunks of stream "stdout"
// or "stderr": each Write(p) notes len(p) bytes of that stream and returns
// len(p), nil. It panics on another stream name (a programming error).
func (a *Arrival) Writer(stream string) io.Writer {
	var s uint8
	switch stream {
	case Stdout:
	case Stderr:
		s = 1
	default:
		panic("store: unknown stream " + stream)
	}
	return arrivalWriter{a, s}
}

type arrivalWriter struct {
	a *Arrival
	s uint8
}

func (w arrivalWriter) Write(p []byte) (int, error) {
	w.a.note(w.s, int64(len(p)))
	return len(p), nil
}

func (a *Arrival) note(s uint8, n int64) {
	if a == nil || n == 0 {
		return
	}
	now := time.Since(a.start)
	a.mu.Lock()
	defer a.mu.Unlock()
	off := a.off[s]
	a.off[s] += n
	if a.stopped {
		return
	}
	if k := len(a.recs); k > 0 {
		last := &a.recs[k-1]
		if last.stream == s && last.offset+last.length == off &&
			now-last.elapsed < arrivalCoalesce && last.length+n <= 1<<31 {
			last.length += n
			a.dirty = true
			a.signal()
			return
		}
	}
	if a.n == MaxArrivalRecords-1 {
		a.recs = append(a.recs, arrivalRec{stream: arrivalEndMark, elapsed: now})
		a.n++
		a.stopped = true
	} else {
		a.recs = append(a.recs, arrivalRec{stream: s, offset: off, length: n, elapsed: now})
		a.n++
	}
	a.dirty = true
	a.signal()
}

// Hold makes the records noted from now on wait, until the matching
// Release, before the writer goroutine writes them (Holds nest). A caller
// that hands on one read in several Writes (the redactor releases 64 KiB at
// a time, and a record that grows is rewritten at each) so costs one
// wake-up and one write of the index per read, not one per Write. Close
// writes what is held.
func (a *Arrival) Hold() {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.holds++
	a.mu.Unlock()
}

// Release ends a Hold and, after the last one, wakes the writer goroutine
// for what was noted meanwhile.
func (a *Arrival) Release() {
	if a == nil {
		return
	}
	a.mu.Lock()
	if a.holds > 0 {
		a.holds--
	}
	if a.holds == 0 && a.dirty {
		a.signal()
	}
	a.mu.Unlock()
}

// signal wakes the writer goroutine, unless a Hold is open (Close's
// signal goes through whatever the holds). Caller holds a.mu.
func (a *Arrival) signal() {
	if a.holds > 0 && !a.closed {
		return
	}
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// run is the writer goroutine: it writes the records not yet written, and
// rewrites the last one, which may have grown, until Close.
func (a *Arrival) run() {
	defer close(a.done)
	var buf []byte
	for {
		<-a.wake
		a.mu.Lock()
		if !a.dirty {
			closed := a.closed
			a.mu.Unlock()
			if closed {
				return
			}
			continue
		}
		k, base := len(a.recs), a.base
		buf = buf[:0]
		for _, r := range a.recs {
			var b [arrivalRecordSize]byte
			r.encode(b[:])
			buf = append(buf, b[:]...)
		}
		a.dirty = false
		a.mu.Unlock()

		off := arrivalHeaderSize + int64(base)*arrivalRecordSize
		buf, full, err := a.charge(buf, off)
		if err == nil && len(buf) > 0 {
			_, err = a.f.WriteAt(buf, off)
			a.size = max(a.size, off+int64(len(buf)))
		}

		a.mu.Lock()
		// Keep the last record written: it may still grow.
		a.recs = a.recs[:copy(a.recs, a.recs[k-1:])]
		a.base += k - 1
		if err != nil && a.err == nil {
			a.err = err
			a.stopped = true
			a.recs, a.dirty = nil, false
		}
		if full {
			a.stopped = true
			a.recs, a.dirty = nil, false
		}
		if a.closed {
			a.signal() // write what Close left, then exit
		}
		a.mu.Unlock()
	}
}

// charge reserves directory quota for the growth of the file that writing
// buf at off makes, and returns the part of buf to write: all of it, or
// the whole records that fit the quota, with full set. The error is the
// ledger's. Called by run only.
func (a *Arrival) charge(buf []byte, off int64) ([]byte, bool, error) {
	grow := off + int64(len(buf)) - a.size
	if a.reserve == nil || grow <= 0 {
		return buf, false, nil
	}
	got, err := a.reserve(grow)
	if err != nil {
		return nil, false, fmt.Errorf("directory quota: %w", err)
	}
	a.size += got // reserved: the ledger counts it until the file has it
	if got == grow {
		return buf, false, nil
	}
	fit := (a.size - off) / arrivalRecordSize * arrivalRecordSize
	return buf[:max(fit, 0)], true, nil
}

// Close writes the records still in memory and closes the index file. It
// waits at most a few seconds for a stuck disk; the error reports a write
// failure or that wait.
func (a *Arrival) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return errors.New("arrival index already closed")
	}
	a.closed = true
	a.stopped = true
	a.signal()
	a.mu.Unlock()
	select {
	case <-a.done:
	case <-time.After(arrivalCloseWait):
		return fmt.Errorf("write %s: no progress for %v", arrivalName, arrivalCloseWait)
	}
	err := a.f.Close()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return fmt.Errorf("write %s: %w", arrivalName, UnwrapPath(a.err))
	}
	return err
}

// ErrNoArrival reports a capture without an arrival index (made by an
// older capwrap, or whose index could not be created).
var ErrNoArrival = errors.New("no arrival index")

// ArrivalReader reads a capture's arrival index record by record, with a
// small fixed buffer whatever the index size. Close it when done.
type ArrivalReader struct {
	f    *os.File
	r    *bufio.Reader
	Full bool // the index ended because it was full: later output is not indexed
}

// OpenArrival opens the arrival index of capture id (a full ID) for
// reading, through the directory's os.Root; it refuses a name that is a
// symbolic link, not a regular file, or has more than one hard link. The
// error wraps ErrNoArrival when the capture has no index.
func (d *Dir) OpenArrival(id string) (*ArrivalReader, error) {
	f, err := d.openCaptureFile(id, arrivalName)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("capture %s: %w", id, ErrNoArrival)
	}
	if err != nil {
		return nil, err
	}
	var h [arrivalHeaderSize]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:]) != arrivalMagic {
		f.Close()
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%s/%s is not an arrival index", id, arrivalName)
		}
		return nil, err
	}
	return &ArrivalReader{f: f, r: bufio.NewReaderSize(f, 64*arrivalRecordSize)}, nil
}

// Next returns the next record, or io.EOF at the end of the index (or at
// a record not yet completely written, or at the end mark of a full
// index, which sets Full). Records of a running capture may be
// followed by more on a later read, and its last record may grow.
func (ar *ArrivalReader) Next() (ArrivalRecord, error) {
	var b [arrivalRecordSize]byte
	if _, err := io.ReadFull(ar.r, b[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = io.EOF
		}
		return ArrivalRecord{}, err
	}
	rec := ArrivalRecord{
		Offset:  int64(binary.LittleEndian.Uint64(b[0:8])),
		Length:  int64(binary.LittleEndian.Uint32(b[8:12])),
		Elapsed: time.Duration(binary.LittleEndian.Uint64(b[16:24])),
	}
	switch b[12] {
	case 0:
		rec.Stream = Stdout
	case 1:
		rec.Stream = Stderr
	case arrivalEndMark:
		ar.Full = true
		return ArrivalRecord{}, io.EOF
	default:
		return ArrivalRecord{}, fmt.Errorf("%s: bad stream byte %#x", arrivalName, b[12])
	}
	if rec.Offset < 0 {
		return ArrivalRecord{}, fmt.Errorf("%s: bad offset", arrivalName)
	}
	return rec, nil
}

// Close closes the index file.
func (ar *ArrivalReader) Close() error { return ar.f.Close() }

// ClipArrival returns a copy of the arrival index read from src (a
// running capture's, whose records may run ahead of the bytes its stream
// files hold) that describes only the first stdout and stderr bytes of
// the streams: a record past them is dropped, one that ends past them is
// cut there, and so is a last record not completely written. It reads at
// most the size of a full index, so memory is bounded (1.5 MiB). The
// error reports a read failure or src not being an arrival index.
func ClipArrival(src io.Reader, stdout, stderr int64) ([]byte, error) {
	max := int64(arrivalHeaderSize + (MaxArrivalRecords+1)*arrivalRecordSize)
	b, err := io.ReadAll(io.LimitReader(src, max))
	if err != nil {
		return nil, err
	}
	if len(b) < arrivalHeaderSize || string(b[:arrivalHeaderSize]) != arrivalMagic {
		return nil, fmt.Errorf("%s is not an arrival index", arrivalName)
	}
	out := append([]byte(nil), b[:arrivalHeaderSize]...)
	size := [2]int64{stdout, stderr}
	for rec := b[arrivalHeaderSize:]; len(rec) >= arrivalRecordSize; rec = rec[arrivalRecordSize:] {
		r := rec[:arrivalRecordSize]
		s := r[12]
		if s == arrivalEndMark {
			out = append(out, r...)
			break
		}
		if s > 1 {
			return nil, fmt.Errorf("%s: bad stream byte %#x", arrivalName, s)
		}
		off := int64(binary.LittleEndian.Uint64(r[0:8]))
		n := int64(binary.LittleEndian.Uint32(r[8:12]))
		if off < 0 || off >= size[s] {
			continue
		}
		var c [arrivalRecordSize]byte
		copy(c[:], r)
		binary.LittleEndian.PutUint32(c[8:12], uint32(min(n, size[s]-off)))
		out = append(out, c[:]...)
	}
	return out, nil
}
