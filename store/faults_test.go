package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/capwrap/capwrap/receipt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// blockingWriter blocks every write forever (until release is closed): a
// disk that hangs.
type blockingWriter struct {
	*os.File
	release chan struct{}
}

func (w blockingWriter) Write(p []byte) (int, error) {
	<-w.release
	return 0, errors.New("released")
}

// slowWriter sleeps before each write: a slow disk that makes progress.
type slowWriter struct {
	*os.File
	delay time.Duration
}

func (w slowWriter) Write(p []byte) (int, error) {
	time.Sleep(w.delay)
	return w.File.Write(p)
}

// shortWriter accepts limit bytes, then fails as a broken (EIO) or full
// (ENOSPC) disk does, with errno: the write that crosses the limit is
// short.
type shortWriter struct {
	*os.File
	mu    *sync.Mutex
	limit *int
	errno syscall.Errno
}

func (w shortWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := min(len(p), *w.limit)
	n, _ = w.File.Write(p[:n])
	*w.limit -= n
	if n < len(p) {
		return n, &fs.PathError{Op: "write", Path: w.Name(), Err: w.errno}
	}
	return n, nil
}

func TestWriterStalled(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	release := make(chan struct{})
	defer close(release)
	d.wrapFile = func(stream string, f *os.File) fileWriter {
		if stream == Stdout {
			return blockingWriter{f, release}
		}
		return f
	}
	const timeout = 200 * time.Millisecond
	c, err := d.Create(time.Now(), Limits{QueueBytes: 64 << 10, StallTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	data := pattern(1 << 20)
	start := time.Now()
	writeAll(c.Stream(Stdout), data, 4096)
	if el := time.Since(start); el < timeout || el > timeout+2*time.Second {
		t.Errorf("writes took %v, want about %v", el, timeout)
	}
	// From now on Write returns at once.
	more := pattern(1 << 20)
	start = time.Now()
	writeAll(c.Stream(Stdout), more, 4096)
	writeAll(c.Stream(Stderr), []byte("after the stall\n"), 100)
	if el := time.Since(start); el > 100*time.Millisecond {
		t.Errorf("writes after the stall took %v", el)
	}
	start = time.Now()
	res, err := c.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > timeout+2*time.Second {
		t.Errorf("Finalize took %v", el) // no second stall timeout; an fsync of stderr
	}
	if res.State != receipt.CapturePartial || *res.Reason != receipt.ReasonWriterStalled || res.Error != nil {
		t.Errorf("result %+v", res)
	}
	if res.Stdout.Committed != 0 || res.Stdout.SHA256 != "" || res.Stdout.File != c.FilePath(Stdout) {
		t.Errorf("stdout %+v", res.Stdout)
	}
	if err := c.Publish(&receipt.Receipt{Schema: receipt.Schema}); err != nil {
		t.Fatal(err)
	}
}

// TestWriterStalledInFinalize: the queue never fills, but the last write
// hangs; Finalize gives up after the stall timeout.
func TestWriterStalledInFinalize(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	release := make(chan struct{})
	defer close(release)
	d.wrapFile = func(stream string, f *os.File) fileWriter { return blockingWriter{f, release} }
	const timeout = 200 * time.Millisecond
	c, err := d.Create(time.Now(), Limits{StallTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	c.Stream(Stdout).Write([]byte("x\n"))
	start := time.Now()
	res, _ := c.Finalize()
	if el := time.Since(start); el < timeout || el > timeout+2*time.Second {
		t.Errorf("Finalize took %v", el)
	}
	if res.Reason == nil || *res.Reason != receipt.ReasonWriterStalled {
		t.Errorf("result %+v", res)
	}
	c.Discard()
}

func TestBackPressureLosesNothing(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	d.wrapFile = func(stream string, f *os.File) fileWriter { return slowWriter{f, 2 * time.Millisecond} }
	c, err := d.Create(time.Now(), Limits{QueueBytes: 8 << 10, StallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	data := pattern(200 << 10)
	start := time.Now()
	writeAll(c.Stream(Stdout), data, 1000)
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Errorf("no back-pressure: %v", el)
	}
	res, err := c.Finalize()
	if err != nil || res.State != receipt.CaptureComplete || res.Stdout.Committed != int64(len(data)) {
		t.Fatalf("result %+v %v", res, err)
	}
	c.Publish(&receipt.Receipt{Schema: receipt.Schema})
}

// countingWriter counts the file writes of a stream.
type countingWriter struct {
	*os.File
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	w.n.Add(1)
	return w.File.Write(p)
}

// TestSmallQueueAdmitsAChunk: a queue smaller than one chunk (--queue-bytes
// 1) still takes a whole chunk when it is empty. It used to cut the
// stream into writes of QueueBytes bytes, a file write and a hand-over per
// byte: so slow that a child's pipe could not be drained before the drain
// timeout, and its tail was lost.
func TestSmallQueueAdmitsAChunk(t *testing.T) {
	for _, q := range []int64{1, 1000, minChunkBytes - 1} {
		t.Run(fmt.Sprint(q), func(t *testing.T) {
			d := mustOpen(t, t.TempDir())
			var writes atomic.Int64
			d.wrapFile = func(stream string, f *os.File) fileWriter { return countingWriter{f, &writes} }
			c, err := d.Create(time.Now(), Limits{QueueBytes: q})
			if err != nil {
				t.Fatal(err)
			}
			data := pattern(256 << 10)
			writeAll(c.Stream(Stdout), data, 256<<10) // one pipe read's worth
			res, err := c.Finalize()
			if err != nil || res.State != receipt.CaptureComplete || res.Stdout.Committed != int64(len(data)) {
				t.Fatalf("result %+v %v", res, err)
			}
			if n, want := writes.Load(), int64(len(data)/minChunkBytes); n > want {
				t.Errorf("%d file writes for %d bytes, want at most %d (chunks of %d bytes)", n, len(data), want, minChunkBytes)
			}
			c.Publish(&receipt.Receipt{Schema: receipt.Schema})
		})
	}
}

func TestShortWriteEIO(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	var mu sync.Mutex
	limit := 100_000
	d.wrapFile = func(stream string, f *os.File) fileWriter { return shortWriter{f, &mu, &limit, syscall.EIO} }
	c, err := d.Create(time.Now(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(c.Stream(Stdout), pattern(1<<20), 64<<10)
	res, err := c.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	if res.State != receipt.CapturePartial || *res.Reason != receipt.ReasonWriteError || res.Error == nil || !strings.Contains(*res.Error, "input/output error") {
		t.Errorf("result %+v", res)
	}
	if res.Stdout.Committed != 100_000 {
		t.Errorf("committed %d, want 100000", res.Stdout.Committed)
	}
	got, _ := os.ReadFile(res.Stdout.File)
	if !bytes.Equal(got, pattern(100_000)) || res.Stdout.SHA256 != hexSum(got) {
		t.Errorf("file holds %d bytes", len(got))
	}
	c.Publish(&receipt.Receipt{Schema: receipt.Schema})
}

// helperCmd runs this test binary as a helper (see runHelper), through sh
// so that a ulimit can be set first.
func helperCmd(t *testing.T, which, dir string, n int, shellPrefix string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", shellPrefix+`exec "$0" -test.run=^$`, exe)
	cmd.Env = append(os.Environ(), "STORE_TEST_HELPER="+which, "STORE_TEST_DIR="+dir, fmt.Sprintf("STORE_TEST_BYTES=%d", n))
	cmd.Stderr = os.Stderr
	return cmd
}

func checkWriteError(t *testing.T, out []byte, wantErr string, total int) {
	t.Helper()
	var res Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("helper output %q: %v", out, err)
	}
	want := receipt.ReasonWriteError
	if wantErr == "no space left on device" {
		want = receipt.ReasonDiskFull // issue 26: said in plain words
	}
	if res.State != receipt.CapturePartial || res.Reason == nil || *res.Reason != want || res.Error == nil || !strings.Contains(*res.Error, wantErr) {
		t.Fatalf("result %+v", res)
	}
	fi, err := os.Stat(res.Stdout.File)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != res.Stdout.Committed || res.Stdout.Committed >= int64(total) || res.Stdout.Committed == 0 {
		t.Errorf("committed %d, file holds %d, of %d", res.Stdout.Committed, fi.Size(), total)
	}
	got, _ := os.ReadFile(res.Stdout.File)
	if !bytes.Equal(got, pattern(len(got))) || hexSum(got) != res.Stdout.SHA256 {
		t.Error("file content or hash wrong")
	}
	if want := filepath.Join(filepath.Dir(res.Stdout.File), "stdout.live") + ": "; !strings.Contains(*res.Error, want) {
		t.Errorf("error %q does not name %s", *res.Error, want)
		t.Error("file content or hash wrong")
	}
	t.Logf("%s after %d bytes", *res.Error, res.Stdout.Committed)
}

// TestFileSizeLimit runs a capture under `ulimit -f`: the Go runtime
// survives SIGXFSZ and the write fails with EFBIG.
func TestFileSizeLimit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tool-outputs")
	const total = 1_000_000
	out, err := helperCmd(t, "efbig", dir, total, "ulimit -f 64 || exit 99; ").Output()
	if err != nil {
		t.Fatalf("helper: %v (%q)", err, out)
	}
	checkWriteError(t, out, "file too large", total)
}

// TestDiskFull runs a capture on a small tmpfs (root only).
func TestDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	defer exec.Command("umount", mnt).Run()
	const total = 1_000_000
	out, err := helperCmd(t, "efbig", filepath.Join(mnt, "tool-outputs"), total, "").Output()
	if err != nil {
		t.Fatalf("helper: %v (%q)", err, out)
	}
	checkWriteError(t, out, "no space left on device", total)
}

// TestKilledCaptureIsAbandoned kills a capturing process with SIGKILL.
func TestKilledCaptureIsAbandoned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tool-outputs")
	const total = 300_000
	cmd := helperCmd(t, "killme", dir, total, "")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	id := strings.TrimSpace(strings.TrimPrefix(line, "ready "))
	d := mustOpen(t, dir)
	e, err := d.Entry(id)
	if err != nil || !e.Running || e.Abandoned {
		t.Errorf("while alive: %+v %v", e, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	list, err := d.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	e = list[0]
	if e.ID != id || e.Running || !e.Abandoned || e.Final || e.Receipt == nil || e.Receipt.Process.State != "running" {
		t.Errorf("after kill: %+v", e)
	}
	if !e.Stdout.Live || e.Stdout.Size != total {
		t.Errorf("stdout %+v", e.Stdout)
	}
	got, _ := os.ReadFile(filepath.Join(dir, id, "stdout.live"))
	if !bytes.Equal(got, pattern(total)) {
		t.Errorf(".live file holds %d bytes, not the committed ones", len(got))
	}
}

// crash simulates the death of a capturing process: the lock goes, nothing
// is finalized.
func crash(c *Capture) {
	c.mu.Lock()
	c.stop("", nil)
	c.mu.Unlock()
	c.release()
}

func TestAbandonedInProcess(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	c, _ := d.Create(time.Now().Add(-time.Hour), Limits{})
	writeAll(c.Stream(Stdout), pattern(10_000), 1000)
	for c.Stream(Stdout).Committed() < 10_000 {
		time.Sleep(time.Millisecond)
	}
	running, _ := d.Create(time.Now(), Limits{})
	defer running.Discard()
	crash(c)
	list, err := d.List()
	if err != nil || len(list) != 2 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if list[0].ID != running.ID() || !list[0].Running || list[0].Abandoned {
		t.Errorf("newest %+v", list[0])
	}
	if list[1].ID != c.ID() || list[1].Running || !list[1].Abandoned || list[1].Stdout.Size != 10_000 || list[1].Receipt != nil {
		t.Errorf("abandoned %+v", list[1])
	}
}

func TestQuotaConcurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tool-outputs")
	const (
		n     = 50
		quota = 10 << 20
		chunk = 256 << 10
		each  = 1 << 20
	)
	mustOpen(t, dir)
	half := pattern(each / 2)
	var wg sync.WaitGroup
	results := make([]Result, n)
	ids := make([]string, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			// A Dir each, as separate processes would have: the flock
			// does the serializing.
			d, _, err := Open(dir, true, env(nil))
			if err != nil {
				t.Error(err)
				return
			}
			defer d.Close()
			<-start
			c, err := d.Create(time.Now(), Limits{DirQuota: quota, QuotaChunk: chunk, QueueBytes: 128 << 10})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = c.ID()
			var sw sync.WaitGroup
			sw.Go(func() { writeAll(c.Stream(Stdout), half, 64<<10) })
			sw.Go(func() { writeAll(c.Stream(Stderr), half, 64<<10) })
			sw.Wait()
			res, err := c.Finalize()
			if err != nil {
				t.Error(err)
			}
			results[i] = res
			if err := c.Publish(&receipt.Receipt{Schema: receipt.Schema}); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	distinct := map[string]bool{}
	var total int64
	var partial int
	for i, r := range results {
		distinct[ids[i]] = true
		total += r.Stdout.Committed + r.Stderr.Committed
		switch {
		case r.State == receipt.CaptureComplete && r.Stdout.Committed+r.Stderr.Committed == each:
		case r.State == receipt.CapturePartial && *r.Reason == receipt.ReasonDirectoryQuota:
			partial++
		default:
			t.Errorf("capture %d: %+v", i, r)
		}
		for _, s := range []StreamResult{r.Stdout, r.Stderr} {
			got, _ := os.ReadFile(s.File)
			if int64(len(got)) != s.Committed || !bytes.HasPrefix(half, got) {
				t.Errorf("%s: corrupt or wrong size", s.File)
			}
		}
	}
	if len(distinct) != n {
		t.Errorf("%d distinct ids", len(distinct))
	}
	d := mustOpen(t, dir)
	onDisk, _ := d.usage("")
	t.Logf("%d bytes kept of quota %d; %d captures partial", total, quota, partial)
	if total != onDisk || total > quota+chunk || total < quota-chunk || partial == 0 {
		t.Errorf("kept %d (on disk %d) with quota %d, chunk %d", total, onDisk, quota, chunk)
	}
	// Full: a new capture keeps nothing, and says why.
	c, _ := d.Create(time.Now(), Limits{DirQuota: quota, QuotaChunk: chunk})
	c.Stream(Stdout).Write([]byte("more\n"))
	res, _ := c.Finalize()
	if res.State != receipt.CapturePartial || *res.Reason != receipt.ReasonDirectoryQuota || res.Stdout.Committed != 0 {
		t.Errorf("over quota: %+v", res)
	}
	c.Publish(&receipt.Receipt{Schema: receipt.Schema})
}

// TestQuotaCrashDoesNotLeak: a crashed capture's reservation stops
// counting once its lock is free; only its bytes count.
func TestQuotaCrashDoesNotLeak(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	lim := Limits{DirQuota: 4 << 20, QuotaChunk: 1 << 20}
	a, _ := d.Create(time.Now(), lim)
	a.Stream(Stdout).Write([]byte("hello\n"))
	for a.Stream(Stdout).Committed() < 6 {
		time.Sleep(time.Millisecond)
	}
	if u, _ := d.usage(""); u != 1<<20 {
		t.Errorf("running capture charged %d, want one chunk", u)
	}
	crash(a)
	if u, _ := d.usage(""); u != 6 {
		t.Errorf("crashed capture charged %d, want its 6 bytes", u)
	}
	b, _ := d.Create(time.Now(), lim)
	writeAll(b.Stream(Stdout), pattern(4<<20), 64<<10)
	res, _ := b.Finalize()
	if res.Stdout.Committed != 4<<20-6 || *res.Reason != receipt.ReasonDirectoryQuota {
		t.Errorf("after crash: %+v", res)
	}
	b.Publish(&receipt.Receipt{Schema: receipt.Schema})
}

func TestPlantedNames(t *testing.T) {
	outside := t.TempDir()
	target := filepath.Join(outside, "target")
	check := func(t *testing.T) {
		t.Helper()
		if b, err := os.ReadFile(target); err != nil || string(b) != "precious" {
			t.Errorf("target touched: %q %v", b, err)
		}
		if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
			t.Errorf("target mode changed: %v", fi.Mode())
		}
	}
	plantAt := func(dir, name string) {
		os.WriteFile(target, []byte("precious"), 0o644)
		os.Chmod(target, 0o644)
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"stdout.live", "stderr.live", "receipt.live.json"} {
		t.Run("create/"+name, func(t *testing.T) {
			d := mustOpen(t, t.TempDir())
			d.afterMkdir = func(tmp string) { plantAt(filepath.Join(d.Abs(), tmp), name) }
			c, err := d.Create(time.Now(), Limits{})
			if name == "receipt.live.json" {
				// Not used by Create; replaced (not followed) by the first
				// live receipt.
				if err != nil {
					t.Fatal(err)
				}
				if err := c.WriteLiveReceipt(&receipt.Receipt{Schema: receipt.Schema}); err != nil {
					t.Fatal(err)
				}
				if fi, _ := os.Lstat(filepath.Join(c.AbsPath(), name)); !fi.Mode().IsRegular() {
					t.Error("live receipt not regular")
				}
				c.Discard()
			} else if err == nil {
				t.Error("Create followed a planted symlink")
			}
			check(t)
			// The directory's own files (.warned-mode: a TempDir is
			// 0755) and nothing of the capture.
			l, _ := os.ReadDir(d.Abs())
			l = slices.DeleteFunc(l, func(de os.DirEntry) bool { return de.Name() == warnedModeName })
			if len(l) != 2 {
				t.Errorf("left behind: %v", l)
			}
		})
	}
	t.Run("capture dir symlink", func(t *testing.T) {
		d := mustOpen(t, t.TempDir())
		d.afterMkdir = func(tmp string) {
			p := filepath.Join(d.Abs(), tmp)
			os.Remove(p)
			os.Symlink(outside, p)
		}
		if _, err := d.Create(time.Now(), Limits{}); err == nil {
			t.Error("Create accepted a symlinked capture directory")
		}
		if l, _ := os.ReadDir(outside); len(l) != 1 {
			t.Errorf("outside touched: %v", l)
		}
	})
	for _, name := range []string{"receipt.json.tmp", "receipt.live.json.tmp", "receipt.json", "stdout.log"} {
		t.Run("later/"+name, func(t *testing.T) {
			d := mustOpen(t, t.TempDir())
			c, err := d.Create(time.Now(), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			plantAt(c.AbsPath(), name)
			c.Stream(Stdout).Write([]byte("data\n"))
			liveErr := c.WriteLiveReceipt(&receipt.Receipt{Schema: receipt.Schema})
			res, finErr := c.Finalize()
			pubErr := c.Publish(&receipt.Receipt{Schema: receipt.Schema})
			switch name {
			case "receipt.live.json.tmp":
				if liveErr == nil {
					t.Error("live receipt written through a planted temp name")
				}
			case "receipt.json.tmp", "receipt.json":
				if pubErr == nil {
					t.Error("receipt published through a planted name")
				}
			case "stdout.log":
				if finErr == nil || res.Stdout.File != filepath.Join(c.Path(), "stdout.live") {
					t.Errorf("Finalize renamed onto a planted name: %v %+v", finErr, res.Stdout)
				}
			}
			check(t)
			if fi, err := os.Lstat(filepath.Join(c.AbsPath(), name)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("planted symlink replaced: %v", err)
			}
		})
	}
	t.Run("hard link at lock", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "tool-outputs")
		os.Mkdir(p, 0o700)
		if err := os.Link(target, filepath.Join(p, ".lock")); err != nil {
			t.Skip(err)
		}
		if _, _, err := Open(p, true, env(nil)); err == nil {
			t.Error("hard-linked lock file accepted")
		}
		check(t)
	})
}

func TestLookup(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	now := time.Date(2026, 11, 30, 3, 6, 12, 0, time.UTC)
	var ids []string
	for i := range 3 {
		c, err := d.Create(now.Add(time.Duration(i/2)*time.Minute), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		c.Finalize()
		c.Publish(&receipt.Receipt{Schema: receipt.Schema})
		ids = append(ids, c.ID())
	}
	os.Mkdir(filepath.Join(d.Abs(), "20261130T030612Z-zzzzzzzzzz-not"), 0o700)
	for _, tc := range []struct {
		prefix string
		want   string
		err    error
	}{
		{ids[2], ids[2], nil},
		{ids[2][:19], ids[2], nil},
		{"20261130T0306", "", ErrAmbiguousID},
		{"20261130T0307", ids[2], nil},
		{"20261130T0308", "", ErrUnknownID},
		{"2027", "", ErrUnknownID},
		{"", "", ErrBadID},
		{"../", "", ErrBadID},
		{"..", "", ErrBadID},
		{"2026/", "", ErrBadID},
		{"2026x", "", ErrBadID},
		{ids[2] + "x", "", ErrBadID},
	} {
		got, err := d.Lookup(tc.prefix)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", tc.prefix, got, err, tc.want, tc.err)
		}
	}
	list, _ := d.List()
	if len(list) != 3 || list[0].ID != ids[2] || list[0].ID < list[1].ID || list[1].ID < list[2].ID {
		t.Errorf("List order: %v", list)
	}
}

// BenchmarkStreamWrite: 64 KiB Writes to a stream, one at a time.
func BenchmarkStreamWrite(b *testing.B) { benchStreamWrite(b, 0) }

// benchStreamWrite times a stream's 64 KiB Writes: one per step when held
// is 0, else held of them under one Hold, as the runner hands on a read.
func benchStreamWrite(b *testing.B, held int) {
	d := mustOpen(b, b.TempDir())
	c, err := d.Create(time.Now(), Limits{})
	if err != nil {
		b.Fatal(err)
	}
	buf := pattern(64 << 10)
	w := c.Stream(Stdout)
	b.SetBytes(int64(max(held, 1) * len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if held == 0 {
			w.Write(buf)
			continue
		}
		w.Hold()
		for range held {
			w.Write(buf)
		}
		w.Release()
	}
	res, _ := c.Finalize()
	b.StopTimer()
	if res.State != receipt.CaptureComplete {
		b.Fatalf("%+v", res)
	}
	c.Discard()
}

// TestFinalizeDirectoryGone: the capture's directory was removed while the
// command ran; Finalize cannot rename the stream files, and the result says
// the capture is partial (write_error) instead of complete, so the receipt
// does not name files that are gone.
func TestFinalizeDirectoryGone(t *testing.T) {
	root := t.TempDir()
	d := mustOpen(t, root)
	c, err := d.Create(time.Now(), Limits{StallTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.Stream(Stdout).Write([]byte("x\n"))
	if err := os.RemoveAll(c.AbsPath()); err != nil {
		t.Fatal(err)
	}
	res, err := c.Finalize()
	if err == nil {
		t.Fatal("Finalize: no error, though the directory is gone")
	}
	if res.State != receipt.CapturePartial || res.Reason == nil || *res.Reason != receipt.ReasonWriteError || res.Error == nil {
		t.Errorf("result %+v", res)
	}
}
