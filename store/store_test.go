package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/capwrap/capwrap/receipt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain doubles as a helper process: with STORE_TEST_HELPER set, the test
// binary runs one capture scenario instead of the tests (see runHelper).
func TestMain(m *testing.M) {
	if h := os.Getenv("STORE_TEST_HELPER"); h != "" {
		os.Exit(runHelper(h))
	}
	os.Exit(m.Run())
}

// runHelper runs a capture in the directory $STORE_TEST_DIR:
//
//	efbig:  write $STORE_TEST_BYTES bytes to stdout, finalize, publish, print the Result as JSON
//	killme: write $STORE_TEST_BYTES bytes, wait until committed, print "ready <id>", sleep
func runHelper(which string) int {
	dir := os.Getenv("STORE_TEST_DIR")
	var n int
	fmt.Sscan(os.Getenv("STORE_TEST_BYTES"), &n)
	d, _, err := Open(dir, true, os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	c, err := d.Create(time.Now(), Limits{QueueBytes: 64 << 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	data := pattern(n)
	w := c.Stream(Stdout)
	for p := data; len(p) > 0; {
		k := min(len(p), 4096)
		w.Write(p[:k])
		p = p[k:]
	}
	switch which {
	case "efbig":
		res, err := c.Finalize()
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
		}
		c.Publish(&receipt.Receipt{Schema: receipt.Schema})
		json.NewEncoder(os.Stdout).Encode(res)
		return 0
	case "killme":
		c.WriteLiveReceipt(&receipt.Receipt{Schema: receipt.Schema, Process: receipt.Process{State: "running"}})
		for w.Committed() < int64(n) {
			time.Sleep(time.Millisecond)
		}
		fmt.Printf("ready %s\n", c.ID())
		time.Sleep(time.Minute)
		return 0
	}
	return 2
}

// pattern returns n bytes of recognizable text.
func pattern(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %07d of the test pattern\n", i)
	}
	return b.Bytes()[:n]
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func mustOpen(t testing.TB, path string) *Dir {
	t.Helper()
	d, _, err := Open(path, true, env(nil)) // t.TempDir is 0755: a warning
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestLocate(t *testing.T) {
	for _, tc := range []struct {
		name, flag, envDir string
		want               string
		chosen             bool
	}{
		{"default", "", "", "tool-outputs", false},
		{"env", "", "/logs/conv1", "/logs/conv1", true},
		{"flag beats env", "out", "/logs/conv1", "out", true},
		{"flag", "out", "", "out", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, chosen := Locate(tc.flag, env(map[string]string{"CAPWRAP_DIR": tc.envDir}))
			if got != tc.want || chosen != tc.chosen {
				t.Errorf("Locate = %q, %v; want %q, %v", got, chosen, tc.want, tc.chosen)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o700)
	for _, tc := range []struct {
		name    string
		setup   func(p string)
		chosen  bool
		wantErr string
		warn    string
	}{
		{name: "missing", setup: func(string) {}, chosen: true},
		{name: "missing parents", setup: func(string) {}, chosen: true},
		{name: "exists private", setup: func(p string) { os.Mkdir(p, 0o700) }, chosen: true},
		{name: "exists open", setup: func(p string) { os.Mkdir(p, 0o755); os.Chmod(p, 0o755) }, chosen: true, warn: "accessible by group or others"},
		{name: "symlink", setup: func(p string) { os.Symlink(outside, p) }, chosen: true, wantErr: "symbolic link"},
		{name: "symlink unchosen", setup: func(p string) { os.Symlink(outside, p) }, chosen: false, wantErr: "symbolic link"},
		{name: "regular file", setup: func(p string) { os.WriteFile(p, nil, 0o600) }, chosen: true, wantErr: "not a directory"},
		{name: "lock is symlink", setup: func(p string) {
			os.Mkdir(p, 0o700)
			os.WriteFile(filepath.Join(outside, "target"), []byte("x"), 0o600)
			os.Symlink(filepath.Join(outside, "target"), filepath.Join(p, ".lock"))
		}, chosen: true, wantErr: "not a regular file"},
		{name: "lock is hard link", setup: func(p string) {
			os.Mkdir(p, 0o700)
			os.WriteFile(filepath.Join(p, "other"), []byte("x"), 0o600)
			os.Link(filepath.Join(p, "other"), filepath.Join(p, ".lock"))
		}, chosen: true, wantErr: "hard links"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(base, strings.ReplaceAll(tc.name, " ", "-"), "tool-outputs")
			if tc.name != "missing parents" {
				os.MkdirAll(filepath.Dir(p), 0o700)
			}
			tc.setup(p)
			d, warns, err := Open(p, tc.chosen, env(map[string]string{"HOME": filepath.Join(base, "home")}))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if b, _ := os.ReadFile(filepath.Join(outside, "target")); len(b) > 1 {
					t.Errorf("symlink target modified: %q", b)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if d.Path() != p || d.Abs() != p {
				t.Errorf("Path, Abs = %q, %q", d.Path(), d.Abs())
			}
			if got := strings.Join(warns, "\n"); (tc.warn == "") != (got == "") || !strings.Contains(got, tc.warn) {
				t.Errorf("warnings %q, want %q", warns, tc.warn)
			}
			for _, w := range warns {
				if strings.HasPrefix(w, "capwrap") || strings.ToLower(w[:1]) != w[:1] {
					t.Errorf("warning not in house style: %q", w)
				}
			}
			if b, err := os.ReadFile(filepath.Join(p, ".gitignore")); err != nil || string(b) != "*\n" {
				t.Errorf(".gitignore = %q, %v", b, err)
			}
		})
	}
}

func TestOpenFallback(t *testing.T) {
	base := t.TempDir()
	foreign := filepath.Join(base, "foreign")
	os.Mkdir(foreign, 0o755)
	if os.Geteuid() == 0 {
		// As root, a working directory owned by someone else is the one
		// case that makes ./tool-outputs unusable.
		if err := os.Chown(foreign, 65534, 65534); err != nil {
			t.Skipf("chown: %v", err)
		}
	} else {
		os.Chmod(foreign, 0o555)
		defer os.Chmod(foreign, 0o755)
	}
	p := filepath.Join(foreign, "tool-outputs")
	state := filepath.Join(base, "state")
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"xdg", map[string]string{"XDG_STATE_HOME": state, "HOME": "/nonexistent"}, filepath.Join(state, "capwrap", "tool-outputs")},
		{"home", map[string]string{"HOME": filepath.Join(base, "home")}, filepath.Join(base, "home", ".local", "state", "capwrap", "tool-outputs")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, warns, err := Open(p, false, env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if d.Path() != tc.want {
				t.Errorf("Path = %q, want %q", d.Path(), tc.want)
			}
			if !d.Fallback() {
				t.Error("Fallback() = false after a fallback")
			}
			if len(warns) != 1 || !strings.Contains(warns[0], tc.want) {
				t.Errorf("warnings = %q", warns)
			}
			if m := mode(t, tc.want); m != 0o700 {
				t.Errorf("fallback mode %v", m)
			}
		})
	}
	if _, err := os.Lstat(p); err == nil {
		t.Errorf("%s was created", p)
	}
	// A chosen location is never replaced (as root, a foreign parent is no
	// obstacle; TestOpenReadOnly covers root).
	if os.Geteuid() != 0 {
		if _, _, err := Open(p, true, env(map[string]string{"XDG_STATE_HOME": state})); err == nil {
			t.Fatal("chosen unusable directory accepted")
		}
	}
}

// TestOpenReadOnly uses a read-only file system: the only way to make a
// directory unwritable for root.
func TestOpenReadOnly(t *testing.T) {
	base := t.TempDir()
	ro := filepath.Join(base, "ro")
	os.Mkdir(ro, 0o755)
	if os.Geteuid() == 0 {
		if err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", ro).Run(); err != nil {
			t.Skipf("cannot mount a read-only tmpfs: %v", err)
		}
		defer exec.Command("umount", ro).Run()
	} else {
		os.Chmod(ro, 0o555)
		defer os.Chmod(ro, 0o755)
	}
	p := filepath.Join(ro, "tool-outputs")
	if _, _, err := Open(p, true, env(nil)); err == nil {
		t.Fatal("chosen read-only directory accepted")
	}
	d, warns, err := Open(p, false, env(map[string]string{"XDG_STATE_HOME": filepath.Join(base, "state")}))
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if !strings.HasPrefix(d.Path(), filepath.Join(base, "state")) || len(warns) != 1 || !d.Fallback() {
		t.Errorf("Path %q warnings %q fallback %v", d.Path(), warns, d.Fallback())
	}
	if d := mustOpen(t, filepath.Join(base, "usable")); d.Fallback() {
		t.Error("Fallback() = true for a usable directory")
	}
}

func TestModesUnderUmask(t *testing.T) {
	for _, um := range []int{0o000, 0o022, 0o077} {
		t.Run(fmt.Sprintf("%03o", um), func(t *testing.T) {
			old := syscall.Umask(um)
			defer syscall.Umask(old)
			p := filepath.Join(t.TempDir(), "tool-outputs")
			d := mustOpen(t, p)
			c, err := d.Create(time.Now(), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			c.Stream(Stdout).Write([]byte("hello\n"))
			if err := c.WriteLiveReceipt(&receipt.Receipt{Schema: receipt.Schema}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Finalize(); err != nil {
				t.Fatal(err)
			}
			live := filepath.Join(c.AbsPath(), "receipt.live.json")
			if got := mode(t, live); got != 0o600 {
				t.Errorf("%s: mode %v, want 0600", live, got)
			}
			if err := c.Publish(&receipt.Receipt{Schema: receipt.Schema}); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(live); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("receipt.live.json left beside receipt.json (lstat: %v)", err)
			}
			want := map[string]fs.FileMode{
				p:                                        0o700,
				filepath.Join(p, ".gitignore"):           0o600,
				filepath.Join(p, ".lock"):                0o600,
				c.AbsPath():                              0o700,
				filepath.Join(c.AbsPath(), "stdout.log"): 0o600,
				filepath.Join(c.AbsPath(), "stderr.log"): 0o600,
				filepath.Join(c.AbsPath(), "receipt.json"): 0o600,
			}
			for path, m := range want {
				if got := mode(t, path); got != m {
					t.Errorf("%s: mode %v, want %v", path, got, m)
				}
			}
		})
	}
}

func TestIDs(t *testing.T) {
	now := time.Date(2026, 11, 30, 3, 6, 12, 0, time.UTC)
	seen := map[string]bool{}
	for range 10000 {
		id, err := newID(now, cryptoRand)
		if err != nil {
			t.Fatal(err)
		}
		if !ValidID(id) || !strings.HasPrefix(id, "20261130T030612Z-") {
			t.Fatalf("bad id %q", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
	a, _ := newID(now, cryptoRand)
	b, _ := newID(now.Add(time.Second), cryptoRand)
	c, _ := newID(now.Add(time.Hour*24*40), cryptoRand)
	if !(a < b && b < c) {
		t.Errorf("not sortable: %s %s %s", a, b, c)
	}
	for _, s := range []string{"", "20261130T030612Z-k3j4h5g6x", "20261130T030612Z-k3j4h5g6x1", "20261130T030612Z-K3j4h5g6x2", "20261130T030612Zxk3j4h5g6x2", "../1130T030612Z-k3j4h5g6x2"} {
		if ValidID(s) {
			t.Errorf("ValidID(%q) = true", s)
		}
	}

	// Many real captures in the same second of one directory.
	d := mustOpen(t, t.TempDir())
	ids := map[string]bool{}
	for range 200 {
		c, err := d.Create(now, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		ids[c.ID()] = true
		c.Discard()
	}
	if len(ids) != 200 {
		t.Errorf("%d distinct ids of 200", len(ids))
	}
}

func TestCreateRetriesCollidingID(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	calls := 0
	d.random = func(p []byte) (int, error) {
		calls++
		for i := range p {
			p[i] = byte(calls / 3) // the same ID for the first two calls
		}
		return len(p), nil
	}
	now := time.Now()
	c1, err := d.Create(now, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Discard()
	c2, err := d.Create(now, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Discard()
	if c1.ID() == c2.ID() {
		t.Fatal("same id twice")
	}
}

// writeAll writes data in pieces of size n.
func writeAll(w *StreamWriter, data []byte, n int) {
	for len(data) > 0 {
		k := min(n, len(data))
		if got, err := w.Write(data[:k]); got != k || err != nil {
			panic(fmt.Sprintf("Write = %d, %v", got, err))
		}
		data = data[k:]
	}
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestFinalizeRenamesAndHashes(t *testing.T) {
	for _, tc := range []struct {
		name         string
		out, err     int
		piece, queue int
	}{
		{"empty", 0, 0, 1, 0},
		{"one byte writes", 3000, 700, 1, 256},
		{"small queue", 300_000, 20_000, 4096, 1000},
		{"big writes", 3 << 20, 100_000, 1 << 20, 0},
		{"at chunk boundary", 256 << 10, 256<<10 + 1, 256 << 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustOpen(t, filepath.Join(t.TempDir(), "tool-outputs"))
			c, err := d.Create(time.Now(), Limits{QueueBytes: int64(tc.queue)})
			if err != nil {
				t.Fatal(err)
			}
			out, errb := pattern(tc.out), bytes.ToUpper(pattern(tc.err))
			var wg sync.WaitGroup
			wg.Go(func() { writeAll(c.Stream(Stdout), out, tc.piece) })
			wg.Go(func() { writeAll(c.Stream(Stderr), errb, tc.piece) })
			wg.Wait()
			res, err := c.Finalize()
			if err != nil {
				t.Fatal(err)
			}
			if res.State != receipt.CaptureComplete || res.Reason != nil || res.Error != nil {
				t.Errorf("state %s reason %v", res.State, res.Reason)
			}
			for _, s := range []struct {
				r    StreamResult
				name string
				want []byte
			}{{res.Stdout, Stdout, out}, {res.Stderr, Stderr, errb}} {
				if s.r.Committed != int64(len(s.want)) || s.r.SHA256 != hexSum(s.want) {
					t.Errorf("%s: committed %d sha %s", s.name, s.r.Committed, s.r.SHA256)
				}
				if want := filepath.Join(d.Path(), c.ID(), s.name+".log"); s.r.File != want || c.FilePath(s.name) != want {
					t.Errorf("%s: File %q want %q", s.name, s.r.File, want)
				}
				got, err := os.ReadFile(s.r.File)
				if err != nil || !bytes.Equal(got, s.want) {
					t.Errorf("%s: file holds %d bytes, want %d (%v)", s.name, len(got), len(s.want), err)
				}
				if _, err := os.Lstat(filepath.Join(c.AbsPath(), s.name+".live")); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s.live still there", s.name)
				}
			}
			if _, err := c.Finalize(); err == nil {
				t.Error("second Finalize accepted")
			}
			e, err := d.Entry(c.ID())
			if err != nil || !e.Running || e.Abandoned {
				t.Errorf("before publish: %+v %v", e, err)
			}
			id := c.ID()
			if err := c.Publish(&receipt.Receipt{Schema: receipt.Schema, ID: &id}); err != nil {
				t.Fatal(err)
			}
			e, err = d.Entry(c.ID())
			if err != nil || e.Running || e.Abandoned || !e.Final || e.Receipt == nil || *e.Receipt.ID != id {
				t.Errorf("after publish: %+v %v", e, err)
			}
			if e.Stdout.Size != int64(len(out)) || e.Stdout.Live {
				t.Errorf("entry stdout %+v", e.Stdout)
			}
		})
	}
}

func TestDiscard(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	c, err := d.Create(time.Now(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c.Stream(Stdout).Write([]byte("ok\n"))
	if _, err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	if err := c.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(c.AbsPath()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("capture directory left: %v", err)
	}
	// Discard without Finalize, mid-stream.
	c, _ = d.Create(time.Now(), Limits{})
	writeAll(c.Stream(Stdout), pattern(1<<20), 64<<10)
	if err := c.Discard(); err != nil {
		t.Fatal(err)
	}
	if l, _ := d.List(); len(l) != 0 {
		t.Errorf("List after discards: %+v", l)
	}
}

func TestCaptureLimit(t *testing.T) {
	for _, tc := range []struct {
		name        string
		limit       int64
		out, err    int
		piece       int
		wantPartial bool
	}{
		{"under", 1000, 400, 400, 7, false},
		{"exactly", 1000, 600, 400, 7, false},
		{"one over", 1000, 601, 400, 7, true},
		{"far over", 1000, 100_000, 100_000, 4096, true},
		{"one write", 1000, 5000, 0, 5000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustOpen(t, t.TempDir())
			c, err := d.Create(time.Now(), Limits{MaxCaptureBytes: tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			out, errb := pattern(tc.out), pattern(tc.err)
			for i := 0; i < max(len(out), len(errb)); i += tc.piece {
				if i < len(out) {
					c.Stream(Stdout).Write(out[i:min(i+tc.piece, len(out))])
				}
				if i < len(errb) {
					c.Stream(Stderr).Write(errb[i:min(i+tc.piece, len(errb))])
				}
			}
			res, err := c.Finalize()
			if err != nil {
				t.Fatal(err)
			}
			total := res.Stdout.Committed + res.Stderr.Committed
			if tc.wantPartial {
				if res.State != receipt.CapturePartial || *res.Reason != receipt.ReasonCaptureLimit || total != tc.limit {
					t.Errorf("state %s reason %v committed %d, want partial capture_limit %d", res.State, res.Reason, total, tc.limit)
				}
			} else if res.State != receipt.CaptureComplete || total != int64(tc.out+tc.err) {
				t.Errorf("state %s committed %d", res.State, total)
			}
			// What is kept is a prefix of each stream.
			for _, s := range []struct {
				r    StreamResult
				want []byte
			}{{res.Stdout, out}, {res.Stderr, errb}} {
				got, _ := os.ReadFile(s.r.File)
				if !bytes.HasPrefix(s.want, got) || int64(len(got)) != s.r.Committed {
					t.Errorf("%s: not a prefix, or %d != %d", s.r.File, len(got), s.r.Committed)
				}
			}
			c.Publish(&receipt.Receipt{Schema: receipt.Schema})
		})
	}
}

// BenchmarkSmallCapture is the store's share of `capwrap -- true`
// (SPEC §9: under 3 ms in all).
func BenchmarkSmallCapture(b *testing.B) {
	d := mustOpen(b, b.TempDir())
	for _, keep := range []bool{true, false} {
		b.Run(fmt.Sprintf("keep=%v", keep), func(b *testing.B) {
			for b.Loop() {
				c, err := d.Create(time.Now(), DefaultLimits())
				if err != nil {
					b.Fatal(err)
				}
				c.WriteLiveReceipt(&receipt.Receipt{Schema: receipt.Schema})
				c.Stream(Stdout).Write([]byte("ok\n"))
				c.Finalize()
				if keep {
					c.Publish(&receipt.Receipt{Schema: receipt.Schema})
				} else {
					c.Discard()
				}
			}
		})
	}
}

func TestDrainThenDecide(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	data := pattern(100_000)
	for _, keep := range []bool{false, true} {
		c, err := d.Create(time.Now(), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		writeAll(c.Stream(Stdout), data, 4096)
		res := c.Drain()
		if res.State != receipt.CaptureComplete || res.Stdout.Committed != int64(len(data)) || res.Stdout.SHA256 != hexSum(data) ||
			res.Stdout.File != filepath.Join(c.Path(), "stdout.live") {
			t.Errorf("Drain = %+v", res)
		}
		if err := c.Publish(&receipt.Receipt{Schema: receipt.Schema}); err == nil {
			t.Error("Publish before Finalize accepted")
		}
		if !keep {
			if err := c.Discard(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		fin, err := c.Finalize()
		if err != nil || fin.Stdout.SHA256 != res.Stdout.SHA256 || fin.Stdout.File != c.FilePath(Stdout) {
			t.Errorf("Finalize after Drain = %+v, %v", fin, err)
		}
		if err := c.Publish(&receipt.Receipt{Schema: receipt.Schema}); err != nil {
			t.Fatal(err)
		}
	}
	if l, _ := d.List(); len(l) != 1 || !l[0].Final {
		t.Errorf("List = %+v", l)
	}
}

func TestLedgerCache(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	lim := Limits{DirQuota: 1 << 30, QuotaChunk: 4096}
	var ids []string
	for i := range 3 {
		c, _ := d.Create(time.Now(), lim)
		c.Stream(Stdout).Write(pattern(1000 * (i + 1)))
		c.Finalize()
		c.Publish(&receipt.Receipt{Schema: receipt.Schema})
		ids = append(ids, c.ID())
	}
	if u, err := d.usage(""); u != 6000 || err != nil {
		t.Fatalf("usage = %d, %v", u, err)
	}
	if got := d.readLedgerCache(); len(got) != 3 || got[ids[2]] != 3000 {
		t.Errorf("cache %v", got)
	}
	// A pruned capture leaves the ledger.
	os.RemoveAll(filepath.Join(d.Abs(), ids[0]))
	if u, _ := d.usage(""); u != 5000 {
		t.Errorf("after prune: usage %d", u)
	}
	// A torn or foreign cache is ignored.
	for _, junk := range []string{"capwrap-ledger v1\n" + ids[1] + " 99", "garbage\n" + ids[1] + " 99\n", ""} {
		d.lock.Truncate(0)
		d.lock.WriteAt([]byte(junk), 0)
		if u, _ := d.usage(""); u != 5000 {
			t.Errorf("cache %q: usage %d", junk, u)
		}
	}
	// A running capture is never cached: its reservation counts.
	c, _ := d.Create(time.Now(), lim)
	c.Stream(Stdout).Write([]byte("x"))
	c.Drain()
	if u, _ := d.usage(""); u != 5000+4096 {
		t.Errorf("with a running capture: usage %d", u)
	}
	if _, ok := d.readLedgerCache()[c.ID()]; ok {
		t.Error("running capture cached")
	}
	c.Discard()
}

// TestOpenWarnsOncePerMode: the warning about a directory that group or
// others can reach comes once per mode (issue 15), remembered in
// .warned-mode: again after a change of mode, or after the directory was
// private for a while.
func TestOpenWarnsOncePerMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tool-outputs")
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	for i, step := range []struct {
		mode os.FileMode
		warn bool
	}{
		{0o755, true}, {0o755, false}, {0o755, false}, {0o750, true}, {0o750, false},
		{0o700, false}, {0o750, true}, {0o700, false}, {0o700, false},
	} {
		if err := os.Chmod(p, step.mode); err != nil {
			t.Fatal(err)
		}
		d, warns, err := Open(p, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
		warned := len(warns) == 1 && strings.Contains(warns[0], fmt.Sprintf("accessible by group or others (mode %#o)", step.mode))
		if warned != step.warn || len(warns) > 1 {
			t.Errorf("step %d, mode %#o: warnings %q, want a warning: %v", i, step.mode, warns, step.warn)
		}
		_, err = os.Lstat(filepath.Join(p, warnedModeName))
		if private := step.mode&0o077 == 0; private != errors.Is(err, os.ErrNotExist) {
			t.Errorf("step %d, mode %#o: %s: %v", i, step.mode, warnedModeName, err)
		}
	}
}
