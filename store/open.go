package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Opening a tool-outputs directory and the files of its captures. The verbs
// of SPEC §8 (list, show, read, prune) open an existing one, never create
// one, and reach every file through its os.Root, refusing symbolic links,
// hard links and anything but regular files at the names they read.

// ErrNoDir reports that the tool-outputs directory does not exist.
var ErrNoDir = errors.New("no tool-outputs directory")

// ErrRunning reports that a capture is running (its writer holds its
// lock), so it may not be removed.
var ErrRunning = errors.New("capture is running")

// OpenExisting opens the tool-outputs directory at path for reading
// captures back (SPEC §8) without creating or changing anything in it. The
// error wraps ErrNoDir when path does not exist; a path that is a symbolic
// link or not a directory is refused, as [Open] does.
func OpenExisting(path string) (*Dir, error) {
	if path == "" {
		return nil, errors.New("empty tool-outputs directory path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", path, ErrNoDir)
	case err != nil:
		return nil, err
	}
	return openVerified(path, abs, fi)
}

// openVerified opens the tool-outputs directory at path (abs, absolute),
// which Lstat described as fi, as an os.Root: one that is a symbolic link
// or not a directory is refused, and so is one whose name was swapped
// between the Lstat and the open (SPEC §4), and so is one that another
// user owns or that group or others may write to (*UnsafeError, see
// strict.go). Open and OpenExisting both open through it.
func openVerified(path, abs string, fi fs.FileInfo) (*Dir, error) {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("tool-outputs directory %s is a symbolic link; refusing it", path)
	case !fi.IsDir():
		return nil, fmt.Errorf("tool-outputs directory %s is not a directory", path)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	rfi, err := root.Stat(".")
	if err == nil && !os.SameFile(fi, rfi) {
		err = fmt.Errorf("tool-outputs directory %s changed while being opened; refusing it", path)
	}
	if err == nil {
		err = checkTrusted("tool-outputs directory", path, rfi)
	}
	if err != nil {
		root.Close()
		return nil, err
	}
	return &Dir{path: path, abs: abs, root: root}, nil
}

// openCaptureFile opens name inside capture id for reading, refusing a
// capture directory or file that is a symbolic link, a file that is not
// regular or that has more than one hard link (which could reach a file
// outside the tool-outputs directory).
func (d *Dir) openCaptureFile(id, name string) (*os.File, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("%q: %w", id, ErrBadID)
	}
	if fi, err := d.root.Lstat(id); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory; refusing it", id)
	}
	p := id + "/" + name
	if fi, err := d.root.Lstat(p); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file; refusing it", p)
	}
	f, err := d.root.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if err := checkOpened(d.root, p, f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenStream opens the current file of stream "stdout" or "stderr" of
// capture id (a full ID) for reading: stream.log once the capture was
// finalized, else stream.live, which may still grow. It returns the file
// and its name inside the capture directory. The open file stays valid
// when Finalize renames .live to .log. The error is fs.ErrNotExist when
// neither name exists.
func (d *Dir) OpenStream(id, stream string) (*os.File, string, error) {
	if stream != Stdout && stream != Stderr {
		return nil, "", fmt.Errorf("unknown stream %q", stream)
	}
	// .log, .live, then .log again: a rename between two tries is seen.
	for _, suf := range []string{logSuffix, liveSuffix, logSuffix} {
		f, err := d.openCaptureFile(id, stream+suf)
		if err == nil {
			return f, stream + suf, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("%s/%s: %w", id, stream+logSuffix, fs.ErrNotExist)
}

// ReadReceipt returns the bytes of capture id's receipt.json, or of
// receipt.live.json when live is true, read as OpenStream reads.
func (d *Dir) ReadReceipt(id string, live bool) ([]byte, error) {
	name := receiptName
	if live {
		name = liveReceiptName
	}
	return d.readSmall(id, name, 16<<20)
}

// readSmall reads file name of capture id whole, refusing one larger than
// max bytes.
func (d *Dir) readSmall(id, name string, max int64) ([]byte, error) {
	f, err := d.openCaptureFile(id, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s/%s is too large (%d bytes)", id, name, fi.Size())
	}
	b := make([]byte, fi.Size())
	n, err := f.ReadAt(b, 0)
	if n == len(b) {
		err = nil
	}
	return b[:n], err
}

// Remove deletes capture id (a full ID) and everything in it: `capwrap
// prune` (SPEC §8), the only deletion of a capture. It takes the capture
// directory's lock exclusively first and holds it while deleting, so a
// running capture is never touched: the error then wraps ErrRunning. The
// directory quota ledger is rebuilt from the files on disk, so the freed
// bytes are available to the next reservation.
func (d *Dir) Remove(id string) error {
	if !ValidID(id) {
		return fmt.Errorf("%q: %w", id, ErrBadID)
	}
	lfi, err := d.root.Lstat(id)
	if err != nil {
		return err
	}
	if !lfi.IsDir() {
		return fmt.Errorf("%s is not a directory; refusing it", id)
	}
	f, err := d.root.OpenFile(id, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close() // closing drops the lock
	if ffi, err := f.Stat(); err != nil {
		return err
	} else if !os.SameFile(lfi, ffi) {
		return fmt.Errorf("%s changed while being opened; refusing it", id)
	}
	switch err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err {
	case nil:
	case unix.EWOULDBLOCK:
		return fmt.Errorf("%s: %w", id, ErrRunning)
	default:
		return &fs.PathError{Op: "flock", Path: id, Err: err}
	}
	return d.root.RemoveAll(id)
}

// Names of the files of a capture directory besides its streams (SPEC §4,
// §10; doc.go, job.go, arrival.go), for the readers that copy them
// ([Dir.OpenFile]).
const (
	ReceiptFile     = receiptName     // the final receipt, published last
	LiveReceiptFile = liveReceiptName // the receipt written at launch
	PreviewFile     = previewName     // a background job's preview
	ArrivalFile     = arrivalName     // the arrival index
)

// ErrNotCaptureFile reports a name that is not one of the files of a
// capture directory's layout.
var ErrNotCaptureFile = errors.New("not a file of a capture directory")

// StreamFile is the name of stream's file ("stdout" or "stderr") in a
// capture directory: "stdout.live" while it grows (live), "stdout.log"
// once final.
func StreamFile(stream string, live bool) string {
	if live {
		return stream + liveSuffix
	}
	return stream + logSuffix
}

// OpenFile opens the file name of capture id (a full ID) for reading:
// one of the layout's names, a stream's (StreamFile) or ReceiptFile,
// LiveReceiptFile, PreviewFile, ArrivalFile. Another name (the control
// FIFO, the quota reservation, a temporary file, anything planted) is
// refused with an error wrapping ErrNotCaptureFile. As [Dir.OpenStream],
// it refuses a capture directory or file that is a symbolic link, a file
// that is not regular or that has more than one hard link; the error
// wraps fs.ErrNotExist when there is no such file.
func (d *Dir) OpenFile(id, name string) (*os.File, error) {
	switch name {
	case StreamFile(Stdout, false), StreamFile(Stdout, true), StreamFile(Stderr, false), StreamFile(Stderr, true),
		ReceiptFile, LiveReceiptFile, PreviewFile, ArrivalFile, KilledNote:
	default:
		return nil, fmt.Errorf("%s/%s: %w", id, name, ErrNotCaptureFile)
	}
	return d.openCaptureFile(id, name)
}
