package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Consumers' state in a capture directory (SPEC §8: `read --new` moves
// only its consumer's cursor; a job's completion is reported once per
// consumer, apart from reads). Each consumer is a name (DefaultCursor
// unless the caller names one) and keeps, beside the capture's own files:
//
//	cursor.NAME.STREAM        0600; {"cursor":NAME,"stream":STREAM,"next_offset":N}: the
//	                          byte of STREAM (stdout, stderr, or interleaved: the merged
//	                          order) its next read starts at; no file: 0
//	cursor.NAME.STREAM.lock   0600, empty; flocked while a read of that cursor runs
//	notified.NAME             0600, empty; its existence records that the capture's end
//	                          was reported to NAME
//
// A name is 1 to 64 of A-Z a-z 0-9 . _ - (cursorNameRE), so it can be
// neither a path nor empty; a file name parses back to one name and one
// stream because the streams and ".lock" are fixed suffixes. None of these
// files counts toward the directory quota (only stream files do), and
// `capwrap prune` removes them with the capture.

// DefaultCursor is the consumer name of `read --new` and `wait --notify`
// without --cursor.
const DefaultCursor = "default"

// CursorInterleaved is the cursor stream of an interleaved read (both
// streams in their order of arrival), besides Stdout and Stderr.
const CursorInterleaved = "interleaved"

const (
	cursorPrefix   = "cursor."
	notifiedPrefix = "notified."
	lockSuffix     = ".lock"
	tmpSuffix      = ".tmp"
	// maxCursorFile bounds what Offset reads of a cursor file, bytes: the
	// JSON takes under 150.
	maxCursorFile = 1024
)

// cursorNameRE is what a consumer name may be: a file name's part that
// cannot hold a path separator or be empty.
// Compiled at first use: its {1,64} makes 860 allocations, which every
// start of capwrap paid in the package's init (issue 28).
var cursorNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`) })

// ErrBadCursor reports a consumer name that is not 1 to 64 of A-Z a-z 0-9
// . _ - or a cursor stream that is not stdout, stderr or interleaved.
var ErrBadCursor = errors.New("cursor names are 1 to 64 of A-Z a-z 0-9 . _ -")

// ValidCursorName reports whether name may name a consumer (cursorNameRE).
func ValidCursorName(name string) bool { return cursorNameRE().MatchString(name) }

// cursorFile is the content of cursor.NAME.STREAM.
type cursorFile struct {
	Cursor     string `json:"cursor"`
	Stream     string `json:"stream"`
	NextOffset int64  `json:"next_offset"`
}

// encodeCursor is the content of the cursor file of consumer name on
// stream at next offset off (bytes).
func encodeCursor(name, stream string, off int64) []byte {
	b, _ := json.Marshal(cursorFile{Cursor: name, Stream: stream, NextOffset: off})
	return append(b, '\n')
}

// decodeCursor is the offset a cursor file holds, checked against the
// consumer and stream it was read for.
func decodeCursor(b []byte, name, stream string) (int64, error) {
	var c cursorFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return 0, fmt.Errorf("not a cursor file: %v", err)
	}
	switch {
	case dec.More():
		return 0, errors.New("not a cursor file: more than one JSON value")
	case c.Cursor != name || c.Stream != stream:
		return 0, fmt.Errorf("holds cursor %q of stream %q, not %q of %q", c.Cursor, c.Stream, name, stream)
	case c.NextOffset < 0:
		return 0, fmt.Errorf("holds a negative offset %d", c.NextOffset)
	}
	return c.NextOffset, nil
}

// Cursor is one consumer's position in one stream of a capture, locked:
// from [Dir.LockCursor] to Close no other Cursor of the same consumer and
// stream exists, in this process or another, so a read from [Cursor.Offset]
// and the [Cursor.Set] after it are one step that no other reader of that
// cursor sees half-done.
type Cursor struct {
	root         *os.Root // the capture directory
	dirf         *os.File // the capture directory, for its fsync
	lock         *os.File // cursor.NAME.STREAM.lock, flocked
	name, stream string
	file         string // cursor.NAME.STREAM
}

// LockCursor opens the cursor of consumer name on stream (Stdout, Stderr
// or CursorInterleaved) of capture id (a full ID) and waits until no other
// holds it (an exclusive flock of its lock file, which it creates 0600 if
// needed). The error wraps ErrBadCursor for a bad name or stream,
// fs.ErrNotExist when the capture does not exist; a capture directory or
// lock file that is a symbolic link, or a lock file that is not a regular
// file or has other hard links, is refused. The caller must Close the
// Cursor, which releases the lock.
func (d *Dir) LockCursor(id, name, stream string) (*Cursor, error) {
	if !ValidCursorName(name) {
		return nil, fmt.Errorf("%q: %w", name, ErrBadCursor)
	}
	if stream != Stdout && stream != Stderr && stream != CursorInterleaved {
		return nil, fmt.Errorf("cursor stream %q: %w", stream, ErrBadCursor)
	}
	root, dirf, err := d.openCaptureRoot(id)
	if err != nil {
		return nil, err
	}
	c := &Cursor{root: root, dirf: dirf, name: name, stream: stream, file: cursorPrefix + name + "." + stream}
	if c.lock, err = openLockFile(root, c.file+lockSuffix); err == nil {
		err = flock(c.lock, unix.LOCK_EX)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// openCaptureRoot opens capture id's directory as an os.Root, and the
// directory itself: a name that is a symbolic link or not a directory, or
// that changed between the look and the open, is refused.
func (d *Dir) openCaptureRoot(id string) (*os.Root, *os.File, error) {
	if !ValidID(id) {
		return nil, nil, fmt.Errorf("%q: %w", id, ErrBadID)
	}
	lfi, err := d.root.Lstat(id)
	if err != nil {
		return nil, nil, err
	}
	if !lfi.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a directory; refusing it", id)
	}
	root, err := d.root.OpenRoot(id)
	if err != nil {
		return nil, nil, err
	}
	dirf, err := root.Open(".")
	if err == nil {
		var fi fs.FileInfo
		if fi, err = dirf.Stat(); err == nil && !os.SameFile(lfi, fi) {
			err = fmt.Errorf("%s changed while being opened; refusing it", id)
		}
		if err != nil {
			dirf.Close()
		}
	}
	if err != nil {
		root.Close()
		return nil, nil, err
	}
	return root, dirf, nil
}

// Offset is the byte of the cursor's stream its consumer reads next: 0
// when the cursor was never set. A cursor file that is not a regular file
// with one link, is larger than 1 KiB or does not hold this cursor is an
// error (never followed, never taken as 0).
func (c *Cursor) Offset() (int64, error) {
	f, err := c.root.OpenFile(c.file, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if errors.Is(err, syscall.ELOOP) {
		return 0, fmt.Errorf("%s is a symbolic link; refusing it", c.file)
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := checkOpened(c.root, c.file, f); err != nil {
		return 0, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxCursorFile+1))
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", c.file, UnwrapPath(err))
	}
	if len(b) > maxCursorFile {
		return 0, fmt.Errorf("%s is larger than %d bytes; refusing it", c.file, maxCursorFile)
	}
	off, err := decodeCursor(b, c.name, c.stream)
	if err != nil {
		return 0, fmt.Errorf("%s %v", c.file, err)
	}
	return off, nil
}

// Set records off (bytes) as the cursor's next offset: written to
// cursor.NAME.STREAM.tmp (created exclusively, 0600, never through a
// symbolic link), fsynced, renamed over the cursor file (replacing
// whatever is at that name, a symbolic link included, never writing
// through it), then the capture directory is fsynced. A crash leaves the
// old offset or the new one, never a mix; a .tmp left by a crashed
// holder of the lock is removed first (only the holder writes it).
func (c *Cursor) Set(off int64) error {
	if off < 0 {
		return fmt.Errorf("negative cursor offset %d", off)
	}
	tmp := c.file + tmpSuffix
	if err := c.root.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := writeAtomic(c.root, c.dirf, c.file, encodeCursor(c.name, c.stream, off), false); err != nil {
		return err
	}
	return c.dirf.Sync()
}

// Close releases the cursor's lock and its files.
func (c *Cursor) Close() error {
	var err error
	if c.lock != nil {
		err = c.lock.Close() // closing drops the flock
	}
	if c.dirf != nil {
		c.dirf.Close()
	}
	if err2 := c.root.Close(); err == nil {
		err = err2
	}
	return err
}

// MarkNotified records that the end of capture id (a full ID) is being
// reported to consumer name: it creates notified.NAME exclusively (0600,
// O_EXCL: a symbolic link planted there counts as present and is not
// followed) and fsyncs the capture directory. first is true for the one
// call that created it, false when it existed already: of any number of
// concurrent calls for the same consumer exactly one gets true. The
// error wraps ErrBadCursor for a bad name, fs.ErrNotExist when the
// capture does not exist.
func (d *Dir) MarkNotified(id, name string) (first bool, err error) {
	if !ValidCursorName(name) {
		return false, fmt.Errorf("%q: %w", name, ErrBadCursor)
	}
	root, dirf, err := d.openCaptureRoot(id)
	if err != nil {
		return false, err
	}
	defer root.Close()
	defer dirf.Close()
	f, err := root.OpenFile(notifiedPrefix+name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	err = f.Chmod(0o600) // whatever the umask
	if err2 := f.Close(); err == nil {
		err = err2
	}
	if err == nil {
		err = dirf.Sync()
	}
	if err != nil {
		return true, err // recorded, perhaps not durably: report it anyway
	}
	return true, nil
}
