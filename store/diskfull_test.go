package store

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/capwrap/capwrap/receipt"
)

// TestDiskFullPublishes: a capture whose disk fills up is partial with
// reason disk_full, keeps the bytes written before, and still publishes
// its receipt (in the space set aside at Create), so that list and show
// say partial (disk_full), not abandoned (issue 26).
func TestDiskFullPublishes(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	var mu sync.Mutex
	limit := 1000
	d.wrapFile = func(_ string, f *os.File) fileWriter { return shortWriter{f, &mu, &limit, syscall.ENOSPC} }
	enospc := &fs.PathError{Op: "write", Path: "receipt.json.tmp", Err: syscall.ENOSPC}
	d.publishFault = func() error { return enospc }
	c, err := d.Create(time.Now(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(c.AbsPath(), spaceName)); err != nil || fi.Size() != spaceBytes || fi.Mode().Perm() != 0o600 {
		t.Fatalf("receipt.space: %v %v", fi, err)
	}
	writeAll(c.Stream(Stdout), pattern(5000), 700)
	res, err := c.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	if res.State != receipt.CapturePartial || res.Reason == nil || *res.Reason != receipt.ReasonDiskFull || res.Stdout.Committed != 1000 {
		t.Fatalf("result %+v", res)
	}
	rc := &receipt.Receipt{Schema: receipt.Schema, ID: new(c.ID()), Command: []string{"make", "test"},
		Capture: receipt.Capture{State: res.State, Reason: res.Reason, Error: res.Error}}
	if err := c.Publish(rc); err != nil {
		t.Fatalf("Publish on a full disk: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(c.AbsPath(), receiptName))
	var got receipt.Receipt
	if err != nil || json.Unmarshal(b, &got) != nil || got.Capture.Reason == nil || *got.Capture.Reason != receipt.ReasonDiskFull || len(got.Command) != 2 {
		t.Fatalf("receipt.json: %v %s", err, b)
	}
	if _, err := os.Lstat(filepath.Join(c.AbsPath(), spaceName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("receipt.space left behind: %v", err)
	}
	e, err := d.Entry(c.ID())
	if err != nil || e.Abandoned || !e.Final || e.CaptureStatus().String() != "partial (disk_full)" {
		t.Errorf("entry %+v (%v): %s", e, err, e.CaptureStatus())
	}
}

// TestReceiptSpace: the space is removed when the receipt is published the
// usual way and when the capture is discarded; a receipt too large for it
// is cut (compact, then without its command) rather than lost.
func TestReceiptSpace(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	c, err := d.Create(time.Now(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c.Finalize()
	if err := c.Publish(&receipt.Receipt{Schema: receipt.Schema}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(c.AbsPath(), spaceName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("published: receipt.space left behind: %v", err)
	}
	c, _ = d.Create(time.Now(), Limits{})
	if err := c.Discard(); err != nil {
		t.Fatal(err)
	}
	long := string(pattern(spaceBytes))
	for _, tc := range []struct {
		cmd     []string
		command bool
	}{{[]string{"make"}, true}, {[]string{long[:spaceBytes/2]}, true}, {[]string{long}, false}} {
		b, err := fitReceipt(&receipt.Receipt{Schema: receipt.Schema, Command: tc.cmd}, spaceBytes)
		var got receipt.Receipt
		if err != nil || len(b) > spaceBytes || json.Unmarshal(b, &got) != nil || (len(got.Command) > 0) != tc.command {
			t.Errorf("command of %d bytes: %d bytes, %v, command kept %v", len(tc.cmd[0]), len(b), err, len(got.Command) > 0)
		}
	}
}

// TestDiskFullTmpfs fills a real file system (a 256 KiB tmpfs, mounted
// when the test runs as root, as CI does) and checks that the capture
// still gets its receipt.
func TestDiskFullTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root (CI runs as root)")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	d := mustOpen(t, filepath.Join(mnt, "tool-outputs"))
	c, err := d.Create(time.Now(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(c.Stream(Stdout), pattern(1<<20), 64<<10)
	res, err := c.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason == nil || *res.Reason != receipt.ReasonDiskFull || res.Stdout.Committed == 0 {
		t.Fatalf("result %+v", res)
	}
	rc := &receipt.Receipt{Schema: receipt.Schema, ID: new(c.ID()), Capture: receipt.Capture{State: res.State, Reason: res.Reason, Error: res.Error}}
	if err := c.Publish(rc); err != nil {
		t.Fatalf("Publish on a full tmpfs: %v", err)
	}
	e, err := d.Entry(c.ID())
	if err != nil || e.Abandoned || e.CaptureStatus().String() != "partial (disk_full)" {
		t.Errorf("entry %+v (%v)", e, err)
	}
	d.Close()
}
