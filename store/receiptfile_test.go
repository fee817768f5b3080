package store

import (
	"bytes"
	"fmt"
	"github.com/capwrap/capwrap/receipt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestWriteReceiptFile: what each kind of --receipt-file path gets, and
// that nothing is ever left beside it.
func TestWriteReceiptFile(t *testing.T) {
	data := []byte("{\"schema\":\"x\"}\n")
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, dir string) string // returns the path to write
		wantErr string                                // "" for success
		check   func(t *testing.T, dir, path string)
	}{
		{name: "new name", setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "r.json") },
			check: wantFile(data)},
		{name: "regular file replaced", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "r.json")
			os.WriteFile(p, bytes.Repeat([]byte("old "), 1000), 0o644)
			return p
		}, check: wantFile(data)},
		{name: "planted symlinks at predictable temporary names", setup: func(t *testing.T, dir string) string {
			for _, n := range []string{".r.json.tmp", "r.json.tmp", ".r.json.tmp-0000000000000000"} {
				if err := os.Symlink(filepath.Join(dir, "victim"), filepath.Join(dir, n)); err != nil {
					t.Fatal(err)
				}
			}
			os.WriteFile(filepath.Join(dir, "victim"), []byte("victim"), 0o600)
			return filepath.Join(dir, "r.json")
		}, check: func(t *testing.T, dir, path string) {
			wantFile(data)(t, dir, path)
			if b, _ := os.ReadFile(filepath.Join(dir, "victim")); string(b) != "victim" {
				t.Errorf("victim written through a planted link: %q", b)
			}
		}},
		{name: "directory", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "d")
			os.Mkdir(p, 0o700)
			return p
		}, wantErr: "is a directory", check: func(t *testing.T, dir, path string) {
			if l, _ := os.ReadDir(path); len(l) != 0 {
				t.Errorf("left in the directory: %v", l)
			}
		}},
		{name: "socket", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "s")
			l, err := net.Listen("unix", p)
			if err != nil {
				t.Skip(err)
			}
			t.Cleanup(func() { l.Close() })
			return p
		}, wantErr: "a socket", check: wantType(fs.ModeSocket)},
		{name: "fifo without reader", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "f")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skip(err)
			}
			return p
		}, wantErr: "no process is reading the fifo", check: wantType(fs.ModeNamedPipe)},
		{name: "character device", setup: func(t *testing.T, dir string) string { return os.DevNull },
			check: wantType(fs.ModeDevice | fs.ModeCharDevice)},
		{name: "dangling symlink", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "link")
			os.Symlink(filepath.Join(dir, "nowhere"), p)
			return p
		}, wantErr: "dangling", check: func(t *testing.T, dir, path string) {
			if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
				t.Error("created the link's target")
			}
		}},
		{name: "symlink to a regular file", setup: func(t *testing.T, dir string) string {
			os.Mkdir(filepath.Join(dir, "sub"), 0o700)
			os.WriteFile(filepath.Join(dir, "sub", "real.json"), []byte("old"), 0o600)
			p := filepath.Join(dir, "link")
			os.Symlink(filepath.Join("sub", "real.json"), p)
			return p
		}, check: func(t *testing.T, dir, path string) {
			wantFile(data)(t, dir, filepath.Join(dir, "sub", "real.json"))
			wantType(fs.ModeSymlink)(t, dir, path)
			if l, _ := os.ReadDir(filepath.Join(dir, "sub")); len(l) != 1 {
				t.Errorf("left behind in sub: %v", l)
			}
		}},
		{name: "missing directory", setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "no", "r.json") },
			wantErr: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.setup(t, dir)
			before := names(t, dir)
			err := writeUserFile(path, data)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, dir, path)
			}
			for n := range names(t, dir) {
				if strings.Contains(n, ".tmp-") && !before[n] {
					t.Errorf("temporary file left: %s", n)
				}
			}
		})
	}
}

// TestWriteReceiptFileFIFO: a FIFO with a reader gets the bytes and stays
// a FIFO.
func TestWriteReceiptFileFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open(p) // blocks until the writer opens
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		var b bytes.Buffer
		b.ReadFrom(f)
		got <- b.Bytes()
	}()
	data := []byte(strings.Repeat("receipt ", 20000)) // more than a pipe holds
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for {
		// The reader may not have opened yet: no reader is ENXIO.
		if err = writeUserFile(p, data); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if !bytes.Equal(b, data) {
			t.Errorf("reader got %d bytes, want %d", len(b), len(data))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader got nothing: the FIFO was never opened for writing")
	}
	wantType(fs.ModeNamedPipe)(t, "", p)
}

// TestWriteReceiptFileParallel: writers sharing one path all succeed and
// the file is one of their receipts, whole.
func TestWriteReceiptFileParallel(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "shared.json")
	const n = 40
	var wg sync.WaitGroup
	errs := make([]error, n)
	want := map[string]bool{}
	for i := range n {
		b := fmt.Appendf(nil, "{\"run\":%d,\"pad\":%q}\n", i, strings.Repeat("x", 4096*(i%3)))
		want[string(b)] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = writeUserFile(p, b)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("run %d: %v", i, err)
		}
	}
	if b, err := os.ReadFile(p); err != nil || !want[string(b)] {
		t.Errorf("final file is not one whole receipt (%v): %.80q", err, b)
	}
	if l := names(t, dir); len(l) != 1 {
		t.Errorf("left behind: %v", l)
	}
}

func names(t *testing.T, dir string) map[string]bool {
	t.Helper()
	des, _ := os.ReadDir(dir)
	m := map[string]bool{}
	for _, de := range des {
		m[de.Name()] = true
	}
	return m
}

func wantFile(data []byte) func(t *testing.T, dir, path string) {
	return func(t *testing.T, dir, path string) {
		t.Helper()
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("%s: not a regular file: %v", path, err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode().Perm())
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, data) {
			t.Errorf("content %q, want %q", b, data)
		}
	}
}

func wantType(typ fs.FileMode) func(t *testing.T, dir, path string) {
	return func(t *testing.T, dir, path string) {
		t.Helper()
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Type()&typ != typ {
			t.Errorf("%s: type %v, want %v", path, fi.Mode().Type(), typ)
		}
	}
}

// TestReceiptFileSharedDir: in a shared sticky directory, --receipt-file
// neither follows a symbolic link that another user planted (it pointed
// at a root-owned file, which root replaced) nor replaces a file that
// another user owns (issue 26; the kernel's protected_symlinks and
// protected_regular); nothing is written through them. Runs as root (CI
// does), to own the planted names as uid 65534.
func TestReceiptFileSharedDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to plant files owned by another user (uid 65534); CI runs as root")
	}
	shared := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("root's own\n"), 0o600)
	link := filepath.Join(shared, "r.json")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	proc := filepath.Join(shared, "p.json")
	os.Symlink("/proc/self/fd/2", proc)
	os.Lchown(proc, 65534, 65534)
	theirs := filepath.Join(shared, "theirs.json")
	os.WriteFile(theirs, []byte("theirs\n"), 0o644)
	os.Chown(theirs, 65534, 65534)
	rc := &receipt.Receipt{Schema: receipt.Schema}
	for _, tc := range []struct{ path, want string }{
		{link, "refusing to follow it, as the kernel's protected_symlinks does"},
		{proc, "protected_symlinks"},
		{theirs, "refusing to replace it, as the kernel's protected_regular does"},
	} {
		err := WriteReceiptFile(tc.path, rc)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "uid 65534") {
			t.Errorf("%s: %v, want an error with %q", filepath.Base(tc.path), err, tc.want)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "root's own\n" {
		t.Errorf("written through the planted link: %q", b)
	}
	if b, _ := os.ReadFile(theirs); string(b) != "theirs\n" {
		t.Errorf("another user's file replaced: %q", b)
	}
	// One's own link in the same directory is followed as before.
	mine := filepath.Join(shared, "mine.json")
	os.Symlink(victim, mine)
	if err := WriteReceiptFile(mine, rc); err != nil {
		t.Errorf("own link: %v", err)
	}
}
