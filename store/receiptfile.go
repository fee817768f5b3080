package store

import (
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/capwrap/capwrap/receipt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// streamWriteTimeout bounds the write of a receipt to a FIFO or a
// terminal whose reader has stopped reading.
const streamWriteTimeout = 5 * time.Second

// maxTempRetries is how many random temporary names WriteReceiptFile
// tries before it gives up (a collision of 64 random bits is not expected).
const maxTempRetries = 8

// WriteReceiptFile writes r, pretty-printed, to path, a place of the user's
// choosing outside the tool-outputs directory (--receipt-file). What it
// does depends on what path names, looked at without following a
// symbolic link:
//
//   - nothing, or a regular file: the receipt is written to a temporary
//     file created exclusively (0600, never through a symbolic link) under
//     a random name in path's directory, fsynced, closed and renamed over
//     path; the directory is then fsynced. On any failure the temporary
//     file is removed. Concurrent writers of one path each publish a whole
//     receipt; the last rename wins.
//   - a FIFO or a character device (/dev/null, a terminal): the receipt is
//     written to it as a stream, opened without O_CREAT or O_TRUNC and
//     never replaced. A FIFO is opened non-blocking: with no reader the
//     error says so at once. A write that makes no progress for 5 seconds
//     fails.
//   - a symbolic link: followed, and what it names is treated as above
//     (/dev/stderr and /dev/fd/N reach the stream; a link to a regular
//     file has that file replaced, the link stays). A dangling link is
//     refused.
//   - a directory, socket, block device or anything else: refused, with
//     nothing created.
//
// In a shared directory (sticky and writable by others, /tmp), a symbolic
// link, regular file or FIFO that belongs to another user than the
// effective one and the directory's owner is refused before anything is
// opened, followed or replaced, as Linux's protected_symlinks,
// protected_regular and protected_fifos do for other users (issue 26:
// root, given --receipt-file /tmp/r.json, followed a link planted there
// and replaced a root-owned file); so is a link's regular target in such
// a directory.
//
// The error does not repeat path except where it names another one.
func WriteReceiptFile(path string, r *receipt.Receipt) error {
	b, err := r.MarshalPretty()
	if err != nil {
		return err
	}
	return writeUserFile(path, b)
}

func writeUserFile(path string, data []byte) error {
	if fi, err := os.Lstat(path); err == nil {
		if err := checkShared(path, fi); err != nil {
			return err // before a link into /proc is taken for a descriptor
		}
	}
	if namesDescriptor(path) {
		return writeDescriptor(path, data)
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return replaceFile(path, data)
	case err != nil:
		return UnwrapPath(err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return writeThroughLink(path, data)
	}
	return writeByType(path, fi.Mode(), data, false)
}

// writeByType writes data at path according to its type, mode (found by
// Lstat, or by Stat when follow says path is a symbolic link).
func writeByType(path string, mode fs.FileMode, data []byte, follow bool) error {
	switch {
	case mode.IsRegular(): // never with follow: see writeThroughLink
		return replaceFile(path, data)
	case mode&fs.ModeNamedPipe != 0, mode&fs.ModeCharDevice != 0:
		return writeStream(path, data, follow)
	case mode.IsDir():
		return errors.New("is a directory; give a file name")
	}
	return fmt.Errorf("is not a regular file, FIFO or character device (%s); refusing it", typeName(mode))
}

// writeThroughLink follows the symbolic link at path.
func writeThroughLink(path string, data []byte) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("is a dangling symbolic link; refusing it")
	}
	if err != nil {
		return UnwrapPath(err)
	}
	if !fi.Mode().IsRegular() {
		return writeByType(path, fi.Mode(), data, true)
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return UnwrapPath(err)
	}
	tfi, err := os.Lstat(target)
	if err != nil {
		return UnwrapPath(err)
	}
	if !tfi.Mode().IsRegular() {
		return fmt.Errorf("links to %s, which changed meanwhile; refusing it", target)
	}
	if err := checkShared(target, tfi); err != nil {
		return fmt.Errorf("links to %s, which %w", target, err)
	}
	if err := replaceFile(target, data); err != nil {
		return fmt.Errorf("%s: %w", target, err)
	}
	return nil
}

// replaceFile publishes data at path, a regular file or a free name, by a
// rename from a random temporary name in the same directory.
func replaceFile(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" || base == "." || base == ".." {
		return errors.New("is not a file name")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return UnwrapPath(err)
	}
	defer root.Close()
	dirf, err := root.Open(".")
	if err != nil {
		return UnwrapPath(err)
	}
	defer dirf.Close()
	f, tmp, err := createTemp(root, base)
	if err != nil {
		return UnwrapPath(err)
	}
	if err := writeTemp(root, f, tmp, data); err != nil {
		return UnwrapPath(err)
	}
	if err := root.Rename(tmp, base); err != nil {
		root.Remove(tmp)
		return UnwrapPath(err)
	}
	if err := dirf.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, UnwrapPath(err))
	}
	return nil
}

// createTemp creates ".BASE.tmp-RANDOM" exclusively, 0600, in root; a
// symbolic link planted at that name is not followed (O_EXCL).
func createTemp(root *os.Root, base string) (*os.File, string, error) {
	var lastErr error
	for range maxTempRetries {
		var b [8]byte
		if _, err := cryptoRand.Read(b[:]); err != nil {
			return nil, "", fmt.Errorf("read random bits for a temporary name: %w", err)
		}
		tmp := "." + base + ".tmp-" + hex.EncodeToString(b[:])
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err == nil {
			return f, tmp, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
		lastErr = err
	}
	return nil, "", lastErr
}

// writeTemp sets f's mode to 0600 whatever the umask, writes data, fsyncs
// and closes f, the file at tmp in root; it removes tmp on failure.
func writeTemp(root *os.Root, f *os.File, tmp string, data []byte) (err error) {
	defer func() {
		if err != nil {
			root.Remove(tmp)
		}
	}()
	if err = f.Chmod(0o600); err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if err2 := f.Close(); err == nil {
		err = err2
	}
	return err
}

// writeStream writes data to the FIFO or character device at path, opened
// without O_CREAT or O_TRUNC (and, unless follow, without following a
// symbolic link swapped in since it was looked at), and refuses it if it
// turns out to be anything else.
func writeStream(path string, data []byte, follow bool) error {
	flags := os.O_WRONLY | syscall.O_NOCTTY | syscall.O_NONBLOCK
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if errors.Is(err, syscall.ENXIO) {
		return errors.New("no process is reading the fifo")
	}
	if err != nil {
		return UnwrapPath(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return UnwrapPath(err)
	}
	if m := fi.Mode(); m&(fs.ModeNamedPipe|fs.ModeCharDevice) == 0 {
		return fmt.Errorf("changed into %s meanwhile; refusing it", typeName(m))
	}
	f.SetWriteDeadline(time.Now().Add(streamWriteTimeout)) // not every device can wait
	if _, err := f.Write(data); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("its reader read nothing for %v", streamWriteTimeout)
		}
		return UnwrapPath(err)
	}
	return UnwrapPath(f.Close())
}

// typeName names a file type for a message.
func typeName(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a fifo"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "an unknown type"
}

// namesDescriptor reports whether path names one of the process's open
// descriptors rather than a file of its own: /dev/stdout, /dev/stderr,
// /dev/fd/N, /proc/self/fd/N and the like (a link into /proc/*/fd). Such a
// path is where the caller already collects output (`capwrap ... >>log
// --receipt-file /dev/stdout`): replacing what it leads to by a rename
// would throw that away, so it is written as a stream.
func namesDescriptor(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	if strings.HasPrefix(abs, "/dev/fd/") || strings.HasPrefix(abs, "/proc/") {
		return true
	}
	for i := 0; i < 8; i++ { // a link to a link to /proc/self/fd/N
		t, err := os.Readlink(abs)
		if err != nil {
			return false
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(abs), t)
		}
		if strings.HasPrefix(t, "/proc/") || strings.HasPrefix(t, "/dev/fd/") {
			return true
		}
		abs = t
	}
	return false
}

// writeDescriptor appends data to what path names (see namesDescriptor),
// whatever its type, without creating, truncating or replacing anything.
func writeDescriptor(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return errors.New("no process is reading the fifo")
	}
	if err != nil {
		return UnwrapPath(err)
	}
	defer f.Close()
	f.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := f.Write(data); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("its reader read nothing for %v", streamWriteTimeout)
		}
		return UnwrapPath(err)
	}
	return UnwrapPath(f.Close())
}

// checkShared refuses what path names, described by fi (Lstat), when it
// sits in a shared directory (sticky, writable by group or others) and
// belongs to neither the effective user nor the directory's owner: the
// rule of Linux's fs.protected_symlinks, protected_regular and
// protected_fifos, kept here for root too and on every platform.
func checkShared(path string, fi fs.FileInfo) error {
	dir := filepath.Dir(path)
	dfi, err := os.Stat(dir)
	if err != nil || dfi.Mode()&fs.ModeSticky == 0 || dfi.Mode().Perm()&0o022 == 0 {
		return nil
	}
	owner := ownerOf(fi)
	if owner == os.Geteuid() || owner == ownerOf(dfi) {
		return nil
	}
	verb, knob := "write to", "protected_fifos"
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		verb, knob = "follow", "protected_symlinks"
	case fi.Mode().IsRegular():
		verb, knob = "replace", "protected_regular"
	case fi.Mode()&fs.ModeNamedPipe == 0:
		return nil // a device or socket: refused or written by type
	}
	return fmt.Errorf("is %s that %s owns in the shared directory %s (sticky, writable by others); refusing to %s it, as the kernel's %s does", typeName(fi.Mode()), userName(owner), dir, verb, knob)
}
