package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capwrap/capwrap/receipt"
)

// TestRefuseWritableByOthers: a tool-outputs or capture directory that
// group or others may write to is refused (issue 26, as OpenSSH's
// StrictModes): whoever may write there could forge what wait, stop and
// list --running report. Only readable by others is used (with Open's
// warning).
func TestRefuseWritableByOthers(t *testing.T) {
	for _, mode := range []os.FileMode{0o770, 0o707, 0o777, 0o1777} {
		p := filepath.Join(t.TempDir(), "tool-outputs")
		mustOpen(t, p).Close()
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		_, _, err := Open(p, true, env(nil))
		u, ok := errors.AsType[*UnsafeError](err)
		if !ok || u.Foreign || !strings.Contains(err.Error(), "writable by group or others") || !strings.Contains(u.Hint(), "chmod go-w "+p) {
			t.Errorf("Open of a %#o directory: %v", mode, err)
		}
		if _, err := OpenExisting(p); !errors.As(err, new(*UnsafeError)) {
			t.Errorf("OpenExisting of a %#o directory: %v", mode, err)
		}
	}
	d := mustOpen(t, filepath.Join(t.TempDir(), "tool-outputs"))
	c, err := d.Create(time.Now(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c.Finalize()
	c.Publish(&receipt.Receipt{Schema: receipt.Schema})
	if err := os.Chmod(c.AbsPath(), 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Entry(c.ID()); !errors.As(err, new(*UnsafeError)) {
		t.Errorf("Entry of a 0777 capture directory: %v", err)
	}
	if _, err := d.List(); !errors.As(err, new(*UnsafeError)) {
		t.Errorf("List with a 0777 capture directory: %v (refused, not skipped)", err)
	}
}

// TestRefuseForeignDirectory: as root, a tool-outputs directory or a
// capture directory that another user (uid 65534) owns is refused with
// one error naming the owner, where root used to be warned and go on.
func TestRefuseForeignDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown a directory to another user (CI runs as root); TestRefuseWritableByOthers runs anyway")
	}
	p := filepath.Join(t.TempDir(), "tool-outputs")
	d := mustOpen(t, p)
	c, err := d.Create(time.Now(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c.Finalize()
	c.Publish(&receipt.Receipt{Schema: receipt.Schema})
	if err := os.Chown(c.AbsPath(), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Entry(c.ID()); !errors.As(err, new(*UnsafeError)) || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Errorf("Entry of a foreign capture directory: %v", err)
	}
	if _, err := d.List(); !errors.As(err, new(*UnsafeError)) {
		t.Errorf("List with a foreign capture directory: %v", err)
	}
	d.Close()
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func() error{
		"Open":         func() error { _, _, err := Open(p, true, env(nil)); return err },
		"OpenExisting": func() error { _, err := OpenExisting(p); return err },
	} {
		err := open()
		u, ok := errors.AsType[*UnsafeError](err)
		if !ok || !u.Foreign || u.Owner != 65534 || !strings.Contains(err.Error(), "belongs to uid 65534") || !strings.Contains(u.Hint(), "chown") {
			t.Errorf("%s of a foreign directory as root: %v", name, err)
		}
	}
}
