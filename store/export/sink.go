package export

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A sink is where an export goes: a directory or a gzip'd tar. Names are
// slash-separated paths from the export's root. Directories are made
// 0700, files 0600, whatever the umask.
type sink interface {
	// dir makes the directory name.
	dir(name string) error
	// file writes exactly size bytes of r as the new file name; fewer is
	// an error.
	file(name string, size int64, mtime time.Time, r io.Reader) error
	// close completes the export.
	close() error
	// abort removes what the sink made.
	abort()
}

// copyExactly copies size bytes of r to w; fewer is an error.
func copyExactly(w io.Writer, r io.Reader, size int64, name string) error {
	n, err := io.Copy(w, io.LimitReader(r, size))
	if err == nil && n != size {
		err = fmt.Errorf("%s: read %d of %d bytes: %w", name, n, size, io.ErrUnexpectedEOF)
	}
	return err
}

// dirSink writes an export into a directory through an os.Root of it:
// every file created exclusively, no symbolic link followed.
type dirSink struct {
	path    string
	root    *os.Root
	created bool     // the directory itself was made, not found empty
	made    []string // top-level names made, for abort
}

// newDirSink makes the directory path, 0700 (missing parents too, 0700
// before the umask), or takes one that exists and is empty. A symbolic
// link at path is refused; anything else there wraps ErrExists.
func newDirSink(path string) (*dirSink, error) {
	fi, err := os.Lstat(path)
	created := false
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		if err := os.Mkdir(path, 0o700); errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s %w", path, ErrExists)
		} else if err != nil {
			return nil, err
		}
		created = true
		if fi, err = os.Lstat(path); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s is a symbolic link; refusing it", path)
	case !fi.IsDir():
		return nil, fmt.Errorf("%s %w and is not a directory", path, ErrExists)
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	s := &dirSink{path: path, root: root, created: created}
	if err := s.check(fi); err != nil {
		s.abort()
		return nil, err
	}
	return s, nil
}

// check makes sure that the root is the directory fi described (not one
// swapped in meanwhile), empty, and 0700 if it was made.
func (s *dirSink) check(fi fs.FileInfo) error {
	rfi, err := s.root.Stat(".")
	if err != nil {
		return err
	}
	if !os.SameFile(fi, rfi) {
		return fmt.Errorf("%s changed while being opened; refusing it", s.path)
	}
	if s.created {
		return s.root.Chmod(".", 0o700)
	}
	f, err := s.root.Open(".")
	if err != nil {
		return err
	}
	defer f.Close()
	if names, err := f.Readdirnames(1); len(names) > 0 {
		return fmt.Errorf("%s %w and is not empty", s.path, ErrExists)
	} else if err != nil && err != io.EOF {
		return err
	}
	return nil
}

func (s *dirSink) track(name string) {
	if !strings.Contains(name, "/") {
		s.made = append(s.made, name)
	}
}

func (s *dirSink) dir(name string) error {
	if err := s.root.Mkdir(name, 0o700); err != nil {
		return err
	}
	s.track(name)
	return s.root.Chmod(name, 0o700)
}

func (s *dirSink) file(name string, size int64, mtime time.Time, r io.Reader) error {
	f, err := s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	s.track(name)
	err = copyExactly(f, r, size, name)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.root.Chtimes(name, mtime, mtime)
	}
	return err
}

func (s *dirSink) close() error {
	f, err := s.root.Open(".")
	if err != nil {
		return err
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return err
	}
	return s.root.Close()
}

func (s *dirSink) abort() {
	for _, name := range s.made {
		s.root.RemoveAll(name)
	}
	s.root.Close()
	if s.created {
		os.Remove(s.path)
	}
}

// tarSink writes an export as a gzip'd tar, under one top directory.
type tarSink struct {
	path string
	top  string // the top directory's name in the archive
	now  time.Time
	f    *os.File
	gz   *gzip.Writer
	tw   *tar.Writer
}

// TopDir is the directory a tar.gz export to path holds everything under
// (and extracts to): its name without .tar.gz or .tgz, "capwrap-export"
// when that leaves nothing.
func TopDir(path string) string {
	base := filepath.Base(path)
	for _, ext := range []string{".tar.gz", ".tgz"} {
		if t, ok := strings.CutSuffix(base, ext); ok {
			base = t
			break
		}
	}
	if base == "" || base == "." || base == ".." {
		return "capwrap-export"
	}
	return base
}

// newTarSink creates the archive path exclusively, 0600, never through a
// symbolic link (missing parents are made 0700); a name taken wraps
// ErrExists.
func newTarSink(path string, now time.Time) (*tarSink, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%s %w", path, ErrExists)
	} else if err != nil {
		return nil, err
	}
	s := &tarSink{path: path, top: TopDir(path), now: now, f: f}
	if err := f.Chmod(0o600); err != nil {
		s.abort()
		return nil, err
	}
	s.gz = gzip.NewWriter(f)
	s.tw = tar.NewWriter(s.gz)
	if err := s.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: s.top + "/", Mode: 0o700, ModTime: now}); err != nil {
		s.abort()
		return nil, err
	}
	return s, nil
}

func (s *tarSink) dir(name string) error {
	return s.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: s.top + "/" + name + "/", Mode: 0o700, ModTime: s.now})
}

func (s *tarSink) file(name string, size int64, mtime time.Time, r io.Reader) error {
	if err := s.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: s.top + "/" + name, Size: size, Mode: 0o600, ModTime: mtime}); err != nil {
		return err
	}
	return copyExactly(s.tw, r, size, name)
}

func (s *tarSink) close() error {
	err := s.tw.Close()
	if gerr := s.gz.Close(); err == nil {
		err = gerr
	}
	if err == nil {
		err = s.f.Sync()
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *tarSink) abort() {
	s.f.Close()
	os.Remove(s.path)
}
