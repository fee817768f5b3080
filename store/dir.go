package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// defaultDirName is the tool-outputs directory used when neither --dir nor
// $CAPWRAP_DIR names one (SPEC §4), relative to the working directory.
const defaultDirName = "tool-outputs"

// EnvDir is the environment variable that names the tool-outputs directory.
const EnvDir = "CAPWRAP_DIR"

// Names of the files store keeps in the tool-outputs directory.
const (
	gitignoreName = ".gitignore"
	lockName      = ".lock" // quota ledger lock (flock) and ledger cache
	tmpDirPrefix  = ".tmp-" // capture directories being set up
	// warnedModeName holds the mode of the directory that Open last
	// warned about (group or others have access), "0755\n": the warning
	// is said once per directory and mode, not before every result.
	warnedModeName = ".warned-mode"
)

// Locate returns the tool-outputs directory path (SPEC §4): flagDir when
// non-empty, else $CAPWRAP_DIR when non-empty, else "tool-outputs" relative
// to the working directory. chosen is true when the user named the location
// (flag or variable); only an unchosen location may fall back elsewhere in
// [Open].
func Locate(flagDir string, getenv func(string) string) (path string, chosen bool) {
	if flagDir != "" {
		return flagDir, true
	}
	if getenv != nil {
		if v := getenv(EnvDir); v != "" {
			return v, true
		}
	}
	return defaultDirName, false
}

// FallbackPath returns ${XDG_STATE_HOME:-$HOME/.local/state}/capwrap/tool-outputs,
// or "" when neither variable gives an absolute directory.
func FallbackPath(getenv func(string) string) string {
	if getenv == nil {
		return ""
	}
	if x := getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "capwrap", defaultDirName)
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "capwrap", defaultDirName)
	}
	return ""
}

// Dir is an open tool-outputs directory. All access to its contents goes
// through an [os.Root]. A Dir is safe for concurrent use by the captures it
// creates; Close it after they are published or discarded.
type Dir struct {
	path string // as given to the user
	abs  string
	root *os.Root
	dirf *os.File // the directory itself, for renames
	lock *os.File // .lock, flocked to serialize quota reservations; holds the ledger cache

	quotaMu sync.Mutex // flock is per open file: serialize in-process too

	fallback bool // Open fell back to FallbackPath

	// Test hooks.
	random     func([]byte) (int, error)
	afterMkdir func(tmpName string)
	wrapFile   func(stream string, f *os.File) fileWriter
	// publishFault, when set, fails Publish's usual write of
	// receipt.json with its error (a full disk).
	publishFault func() error
}

// errUnusable marks a location that a fallback may replace when the user did
// not choose it: permission denied, read-only, or owned by someone else.
type errUnusable struct{ err error }

func (e errUnusable) Error() string { return e.err.Error() }
func (e errUnusable) Unwrap() error { return e.err }

// Open prepares the tool-outputs directory at path (SPEC §4) and returns it
// with warnings for the user (lowercase, without a "capwrap:" prefix).
//
// A missing directory is created 0700, whatever the umask, with a .gitignore
// containing "*"; missing parents are created too. An existing directory is
// used as it is, with a warning when group or others have any access: once
// for that mode (remembered in the directory's .warned-mode), again when
// the mode changes or has been private since. Open
// returns an error, and the caller exits 125, when path is a symbolic link,
// is not a directory, is owned by another user (root included) or
// writable by group or others (an *UnsafeError, strict.go), or cannot be
// written. When
// chosen is false and the default location cannot be used because it is not
// writable or its parent belongs to another user, Open falls back to
// [FallbackPath] and adds a warning saying so; a chosen path never falls back.
func Open(path string, chosen bool, getenv func(string) string) (*Dir, []string, error) {
	d, warns, err := openDir(path, !chosen)
	if err == nil || chosen {
		return d, warns, err
	}
	var unusable errUnusable
	if !errors.As(err, &unusable) {
		return nil, nil, err
	}
	fb := FallbackPath(getenv)
	if fb == "" {
		return nil, nil, fmt.Errorf("%w (and no fallback: HOME is not set)", err)
	}
	d, warns, err2 := openDir(fb, false)
	if err2 != nil {
		return nil, nil, fmt.Errorf("%v; fallback %s: %w", err, fb, err2)
	}
	d.fallback = true
	warns = append([]string{fmt.Sprintf("cannot use %s (%v); captures go to %s", path, unusable.err, fb)}, warns...)
	return d, warns, nil
}

func isPermission(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

func openDir(path string, refuseForeignParent bool) (*Dir, []string, error) {
	if path == "" {
		return nil, nil, errors.New("empty tool-outputs directory path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, err
	}
	euid := os.Geteuid()
	var warns []string
	fi, created, err := makeDir(abs, refuseForeignParent)
	if err != nil {
		return nil, nil, err
	}
	if fi.Mode()&fs.ModeSymlink == 0 && fi.IsDir() && ownerOf(fi) != euid {
		// Another user's, root's too: what they may write there, they
		// could forge (strict.go). Root is no exception (issue 26).
		return nil, nil, errUnusable{&UnsafeError{What: "tool-outputs directory", Path: path, Owner: ownerOf(fi), Mode: fi.Mode().Perm(), Foreign: true}}
	}
	d, err := openVerified(path, abs, fi)
	if err != nil {
		if _, ok := errors.AsType[*UnsafeError](err); ok {
			err = errUnusable{err} // the default location falls back
		}
		return nil, nil, err
	}
	root := d.root
	ok := false
	defer func() {
		if !ok {
			d.Close()
		}
	}()
	if created {
		// Mkdir's mode was filtered by the umask; set it exactly.
		if err := root.Chmod(".", 0o700); err != nil {
			return nil, nil, err
		}
	} else if perm := fi.Mode().Perm(); perm&0o077 == 0 {
		root.Remove(warnedModeName) // private now: a later change warns again
	} else if !warnedAbout(root, perm) {
		warns = append(warns, fmt.Sprintf("tool-outputs directory %s is accessible by group or others (mode %#o); run chmod 700 %s", path, perm, path))
	}
	if d.dirf, err = root.Open("."); err != nil {
		return nil, nil, err
	}
	if d.lock, err = openLockFile(root, lockName); err != nil {
		if isPermission(err) {
			return nil, nil, errUnusable{err}
		}
		return nil, nil, err
	}
	if err := ensureGitignore(root); err != nil {
		return nil, nil, err
	}
	ok = true
	return d, warns, nil
}

// makeDir describes the directory abs, making it 0700 (parents too) when
// it does not exist; created says it did not. With refuseForeignParent
// (the default location, SPEC §4) a parent that belongs to someone else,
// or anything that keeps it from being made, is errUnusable: capwrap then
// falls back to its state directory.
func makeDir(abs string, refuseForeignParent bool) (fi fs.FileInfo, created bool, err error) {
	fi, err = os.Lstat(abs)
	if !errors.Is(err, fs.ErrNotExist) {
		return fi, false, err
	}
	parent := filepath.Dir(abs)
	if refuseForeignParent {
		if pfi, perr := os.Stat(parent); perr == nil && ownerOf(pfi) != os.Geteuid() {
			return nil, false, errUnusable{fmt.Errorf("%s belongs to uid %d", parent, ownerOf(pfi))}
		}
	}
	// The default location (refuseForeignParent) falls back whatever
	// keeps it from being made: a working directory in /proc says
	// ENOENT, a full disk ENOSPC.
	unusable := func(err error) error {
		if isPermission(err) || refuseForeignParent {
			return errUnusable{err}
		}
		return err
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, false, unusable(err)
	}
	if err := os.Mkdir(abs, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, false, unusable(err)
	} else if err == nil {
		created = true
	}
	fi, err = os.Lstat(abs)
	return fi, created, err
}

// warnedAbout reports whether the directory's .warned-mode says that its
// mode perm was warned about already; when not, it records perm there for
// the next Open. The file is read only if it is a regular one (a FIFO
// planted in a directory that others may write to does not block), and
// replaced by a new file, never written through. Failing to record is
// not an error: the warning is then said again next time.
func warnedAbout(root *os.Root, perm fs.FileMode) bool {
	want := fmt.Sprintf("%#o\n", perm)
	if f, err := root.OpenFile(warnedModeName, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0); err == nil {
		b := make([]byte, 16)
		fi, err := f.Stat()
		n := 0
		if err == nil && fi.Mode().IsRegular() {
			n, _ = io.ReadFull(f, b)
		}
		f.Close()
		if string(b[:n]) == want {
			return true
		}
	}
	root.Remove(warnedModeName)
	f, err := root.OpenFile(warnedModeName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false
	}
	_, err = f.WriteString(want)
	if err == nil {
		err = f.Chmod(0o600) // whatever the umask
	}
	if err2 := f.Close(); err != nil || err2 != nil {
		root.Remove(warnedModeName)
	}
	return false
}

func ownerOf(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// ensureGitignore creates .gitignore ("*") unless a name is already there;
// an existing one is left alone, whatever it is.
func ensureGitignore(root *os.Root) error {
	if _, err := root.Lstat(gitignoreName); err == nil {
		return nil
	}
	f, err := root.OpenFile(gitignoreName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString("*\n")
	if err2 := f.Chmod(0o600); err == nil {
		err = err2
	}
	if err2 := f.Close(); err == nil {
		err = err2
	}
	return err
}

// openLockFile opens (creating if needed, 0600) a lock file and refuses a
// name that is a symbolic link, not a regular file, or has more than one
// hard link.
func openLockFile(root *os.Root, name string) (*os.File, error) {
	if fi, err := root.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file; refusing it", name)
	}
	f, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := checkOpened(root, name, f); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkOpened verifies that the file f, opened at name, is a regular file
// with one link and that name still refers to it without a symbolic link.
func checkOpened(root *os.Root, name string, f *os.File) error {
	ffi, err := f.Stat()
	if err != nil {
		return err
	}
	lfi, err := root.Lstat(name)
	if err != nil {
		return err
	}
	switch {
	case !ffi.Mode().IsRegular() || !lfi.Mode().IsRegular() || !os.SameFile(ffi, lfi):
		return fmt.Errorf("%s is not a regular file; refusing it", name)
	case linkCount(ffi) > 1:
		return fmt.Errorf("%s has %d hard links; refusing it", name, linkCount(ffi))
	}
	return nil
}

func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// Path returns the tool-outputs directory as given to the user: relative
// when it was relative.
func (d *Dir) Path() string { return d.path }

// Abs returns the absolute path of the tool-outputs directory.
func (d *Dir) Abs() string { return d.abs }

// Fallback reports whether [Open] fell back to [FallbackPath] because the
// default location could not be used. A `capwrap read` run later from the
// same place would look in the default location, so it must be given this
// directory (--dir).
func (d *Dir) Fallback() bool { return d.fallback }

// ReadArg is the --dir a later `capwrap read` (or wait, stop...) needs to
// find this directory from any working directory: "" when CAPWRAP_DIR
// (read with getenv) names it by an absolute path, which the caller's
// later commands inherit; else its absolute path (the default
// ./tool-outputs, a relative --dir, or the fallback all depend on where
// capwrap ran).
func (d *Dir) ReadArg(getenv func(string) string) string {
	if d.fallback {
		return d.abs
	}
	return ReadArgFor(d.abs, getenv)
}

// ReadArgFor is [Dir.ReadArg] of the tool-outputs directory at the
// absolute path abs (a receipt's abs_dir's parent), when it is not open.
func ReadArgFor(abs string, getenv func(string) string) string {
	if env := getenv(EnvDir); filepath.IsAbs(env) && filepath.Clean(env) == abs {
		return ""
	}
	return abs
}

// Close releases the directory. Captures created from d must be published or
// discarded first.
func (d *Dir) Close() error {
	var err error
	if d.lock != nil {
		err = d.lock.Close()
		d.lock = nil
	}
	if d.dirf != nil {
		d.dirf.Close()
		d.dirf = nil
	}
	if d.root != nil {
		if err2 := d.root.Close(); err == nil {
			err = err2
		}
		d.root = nil
	}
	return err
}

// flock applies how (unix.LOCK_*) to f, retrying on EINTR.
func flock(f *os.File, how int) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = sc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), how)
			if ferr != unix.EINTR {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return ferr
}

// renameNoReplace renames old to new inside the directory dir, failing with
// an error wrapping fs.ErrExist when new exists (whatever it is: a planted
// symlink is not followed nor replaced).
func renameNoReplace(root *os.Root, dir *os.File, oldname, newname string) error {
	sc, err := dir.SyscallConn()
	if err != nil {
		return err
	}
	var rerr error
	err = sc.Control(func(fd uintptr) {
		rerr = renameExcl(int(fd), oldname, newname)
	})
	if err != nil {
		return err
	}
	if rerr == unix.EINVAL || rerr == unix.ENOSYS || rerr == unix.ENOTSUP {
		// File system without RENAME_NOREPLACE: check, then rename.
		if _, err := root.Lstat(newname); err == nil {
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrExist}
		}
		return root.Rename(oldname, newname)
	}
	if rerr != nil {
		if rerr == unix.EEXIST || rerr == unix.ENOTEMPTY {
			rerr = fs.ErrExist
		}
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: rerr}
	}
	return nil
}

// writeAtomic publishes data at name inside root: it creates name+".tmp"
// exclusively (0600, never following a symlink planted there), writes,
// fsyncs and closes it, then renames it into place. With noReplace the
// rename fails when name exists. The temporary file is removed on failure.
// The fixed temporary name suits a capture directory, private to one
// capwrap; a place shared with others takes a random one (replaceFile).
func writeAtomic(root *os.Root, dir *os.File, name string, data []byte, noReplace bool) (err error) {
	tmp := name + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := writeTemp(root, f, tmp, data); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			root.Remove(tmp)
		}
	}()
	if noReplace {
		return renameNoReplace(root, dir, tmp, name)
	}
	return root.Rename(tmp, name)
}
