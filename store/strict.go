package store

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
)

// Trust in a shared directory, as OpenSSH's StrictModes has it (issue
// 26). What `wait`, `stop` and `list --running` report comes from the
// files of a capture directory (its lock, receipts, control FIFO), so
// whoever may write there could forge it: root using a --dir that another
// user owns would believe that user. A tool-outputs directory, and each
// capture directory in it, must belong to the effective user (or to root)
// and must not be writable by group or others; else it is refused with an
// [UnsafeError]. A directory that is only readable by others is used, with
// the warning of [Open].

// UnsafeError is a tool-outputs or capture directory that capwrap does
// not trust: another user owns it, or group or others may write to it.
type UnsafeError struct {
	// What is "tool-outputs directory" or "capture directory"; Path the
	// directory as given to the user.
	What, Path string
	// Owner is the directory's owner (uid); Mode its permission bits.
	Owner int
	Mode  fs.FileMode
	// Foreign is true when Owner is the reason, false when Mode is.
	Foreign bool
}

func (e *UnsafeError) Error() string {
	if e.Foreign {
		return fmt.Sprintf("%s %s belongs to %s, not to %s: its owner could forge what wait, stop and list report; refusing it",
			e.What, e.Path, userName(e.Owner), userName(os.Geteuid()))
	}
	return fmt.Sprintf("%s %s is writable by group or others (mode %#o): they could forge what wait, stop and list report; refusing it",
		e.What, e.Path, e.Mode)
}

// Hint says what to do about e: a directory of one's own, or make this
// one so.
func (e *UnsafeError) Hint() string {
	if e.Foreign {
		return fmt.Sprintf("use a directory of your own (--dir, CAPWRAP_DIR), or take this one: chown -R %d %s", os.Geteuid(), e.Path)
	}
	return fmt.Sprintf("use a directory of your own (--dir, CAPWRAP_DIR), or close this one: chmod go-w %s", e.Path)
}

// userName is "uid N (name)", or "uid N" when N has no name.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

// checkTrusted returns an *UnsafeError when the directory fi (what, path
// as given to the user) belongs to neither the effective user nor root,
// or group or others may write to it; nil when it is trusted.
func checkTrusted(what, path string, fi fs.FileInfo) error {
	owner, euid := ownerOf(fi), os.Geteuid()
	switch {
	case owner != euid && owner != 0:
		return &UnsafeError{What: what, Path: path, Owner: owner, Mode: fi.Mode().Perm(), Foreign: true}
	case fi.Mode().Perm()&0o022 != 0:
		return &UnsafeError{What: what, Path: path, Owner: owner, Mode: fi.Mode().Perm()}
	}
	return nil
}
