package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/capwrap/capwrap/receipt"
)

// TestHoldWritesWholeChunks: between Hold and Release the file writer
// writes whole chunks only, and Release hands it the rest: a read handed
// on in 64 KiB Writes costs one file write per chunk, not one per Write.
func TestHoldWritesWholeChunks(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	var writes atomic.Int64
	d.wrapFile = func(stream string, f *os.File) fileWriter { return countingWriter{f, &writes} }
	c, err := d.Create(time.Now(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	w := c.Stream(Stdout)
	data := pattern(4*maxChunkBytes + 100<<10)
	w.Hold()
	writeAll(w, data[:4*maxChunkBytes], 64<<10)
	w.Release()
	w.Hold()
	writeAll(w, data[4*maxChunkBytes:], 64<<10)
	w.Release()
	finalizeWhole(t, c, data)
	if n := writes.Load(); n != 5 {
		t.Errorf("%d file writes, want 5 (four whole chunks, then the 100 KiB released)", n)
	}
	got, err := os.ReadFile(c.AbsPath() + "/" + Stdout + logSuffix)
	if err != nil || string(got) != string(data) {
		t.Errorf("file: %d bytes, %v; want the %d bytes written", len(got), err, len(data))
	}
	c.Publish(&receipt.Receipt{Schema: receipt.Schema})
}

// TestHoldFullQueue: a Hold never keeps the writer from a full queue. A
// queue smaller than a chunk is full with a partial one; the Write that
// waits for room wakes the writer, which writes it, instead of the capture
// ending as writer_stalled.
func TestHoldFullQueue(t *testing.T) {
	for _, q := range []int64{1, 100 << 10} {
		t.Run(fmt.Sprint(q), func(t *testing.T) {
			d := mustOpen(t, t.TempDir())
			c, err := d.Create(time.Now(), Limits{QueueBytes: q, StallTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			w := c.Stream(Stdout)
			data := pattern(1 << 20)
			w.Hold()
			writeAll(w, data, 30<<10)
			// Stderr's hold is open too: a full queue wakes its writer.
			e := c.Stream(Stderr)
			e.Hold()
			writeAll(e, data[:200<<10], 30<<10)
			w.Release()
			e.Release()
			res, err := c.Finalize()
			if err != nil || res.State != receipt.CaptureComplete || res.Stdout.Committed != int64(len(data)) || res.Stderr.Committed != 200<<10 {
				t.Fatalf("result %+v %v", res, err)
			}
			c.Publish(&receipt.Receipt{Schema: receipt.Schema})
		})
	}
}

// TestHoldNeverReleased: what a Hold keeps is written when the stream
// closes, for the file and the arrival index.
func TestHoldNeverReleased(t *testing.T) {
	d, c, a := newTestArrival(t)
	w := c.Stream(Stdout)
	w.Hold()
	a.Hold()
	w.Write([]byte("held\n"))
	a.Writer(Stdout).Write([]byte("held\n"))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := c.Finalize()
	if err != nil || res.Stdout.Committed != 5 {
		t.Fatalf("result %+v %v", res, err)
	}
	recs, _ := readArrival(t, d, c.ID())
	if len(recs) != 1 || recs[0].Length != 5 {
		t.Errorf("records %+v, want one of 5 bytes", recs)
	}
	c.Publish(&receipt.Receipt{Schema: receipt.Schema})
}

// TestArrivalHold: records noted during a Hold are written after the last
// Release (Holds nest), and grow as without it.
func TestArrivalHold(t *testing.T) {
	d, c, a := newTestArrival(t)
	out, errw := a.Writer(Stdout), a.Writer(Stderr)
	a.Hold()
	out.Write([]byte("abc"))
	a.Hold()
	out.Write([]byte("de"))
	a.Release()
	errw.Write([]byte("1234"))
	a.Release()
	out.Write([]byte("f"))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	recs, _ := readArrival(t, d, c.ID())
	want := []ArrivalRecord{{Stdout, 0, 5, 0}, {Stderr, 0, 4, 0}, {Stdout, 5, 1, 0}}
	if len(recs) != len(want) {
		t.Fatalf("records %+v, want %+v", recs, want)
	}
	for i, r := range recs {
		if r.Stream != want[i].Stream || r.Offset != want[i].Offset || r.Length != want[i].Length {
			t.Errorf("record %d = %+v, want %+v", i, r, want[i])
		}
	}
}

// gateWriter holds every write until open is closed: a disk that pauses,
// so that the queue fills.
type gateWriter struct {
	*os.File
	open chan struct{}
}

func (w gateWriter) Write(p []byte) (int, error) {
	<-w.open
	return w.File.Write(p)
}

// TestSlabChunks: a queue that fills takes its chunks past the first
// slabAfter from the slab, reuses them, and the bytes and hash come out
// as written; the slab is unmapped once the capture is published.
func TestSlabChunks(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	open := make(chan struct{})
	d.wrapFile = func(stream string, f *os.File) fileWriter { return gateWriter{f, open} }
	c, err := d.Create(time.Now(), Limits{QueueBytes: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	w := c.Stream(Stdout)
	data := pattern(16 << 20)
	w.Hold()                          // whole chunks only: the count below is exact
	writeAll(w, data[:2<<20], 64<<10) // fills the queue while the disk pauses
	c.mu.Lock()
	used, made := c.slabUsed, c.made
	c.mu.Unlock()
	if made != 8 || (used != 6*maxChunkBytes && used != 0) {
		// 0: no slab on this platform; chunks come from the heap.
		t.Errorf("%d chunks made, %d bytes of slab used; want 8 and %d", made, used, 6*maxChunkBytes)
	}
	close(open)
	writeAll(w, data[2<<20:], 64<<10)
	w.Release()
	finalizeWhole(t, c, data)
	c.mu.Lock()
	if c.made > c.maxFree() {
		t.Errorf("%d chunks made for a queue of %d: spare chunks were not reused", c.made, c.maxFree()-1)
	}
	c.mu.Unlock()
	c.Publish(&receipt.Receipt{Schema: receipt.Schema})
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slab != nil || c.free != nil {
		t.Error("slab still mapped after Publish")
	}
}

// BenchmarkStreamWriteHeld is BenchmarkStreamWrite as the runner writes: a
// 256 KiB read handed on in four 64 KiB Writes under one Hold.
func BenchmarkStreamWriteHeld(b *testing.B) { benchStreamWrite(b, 4) }

// TestSyncAhead: a capture told SyncAhead starts the writeback of each
// syncAheadBytes its streams write, and only then; the bytes and hash are
// those written.
func TestSyncAhead(t *testing.T) {
	for _, ahead := range []bool{false, true} {
		t.Run(fmt.Sprint(ahead), func(t *testing.T) {
			d := mustOpen(t, t.TempDir())
			c, err := d.Create(time.Now(), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if ahead {
				c.SyncAhead()
			}
			w := c.Stream(Stdout)
			data := pattern(2*syncAheadBytes + 100<<10)
			writeAll(w, data, 256<<10)
			finalizeWhole(t, c, data)
			// Finalize waited for the writer goroutine: its field is ours now.
			if want := int64(0); !ahead && w.kicked != want {
				t.Errorf("writeback started up to %d without SyncAhead", w.kicked)
			}
			if ahead && (w.kicked < 2*syncAheadBytes || w.kicked > int64(len(data))) {
				t.Errorf("writeback started up to %d of %d bytes, want at least %d", w.kicked, len(data), 2*syncAheadBytes)
			}
			c.Publish(&receipt.Receipt{Schema: receipt.Schema})
		})
	}
}

// syncCounter counts a stream file's fsyncs; the first fail fsyncs fail
// with EIO.
type syncCounter struct {
	*os.File
	n    *atomic.Int64
	fail int64
}

func (f syncCounter) Sync() error {
	if f.n.Add(1) <= f.fail {
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: syscall.EIO}
	}
	return f.File.Sync()
}

// TestSyncBehind: a capture told SyncAhead also fsyncs each stream's file
// after each syncBehindBytes written (the flusher), so that Finalize's
// fsync has little left to wait for; without SyncAhead Finalize's fsync is
// the only one. The bytes and hash are those written.
func TestSyncBehind(t *testing.T) {
	for _, ahead := range []bool{false, true} {
		t.Run(fmt.Sprint(ahead), func(t *testing.T) {
			d := mustOpen(t, t.TempDir())
			var syncs atomic.Int64
			d.wrapFile = func(stream string, f *os.File) fileWriter {
				if stream == Stdout {
					return syncCounter{File: f, n: &syncs}
				}
				return f
			}
			c, err := d.Create(time.Now(), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if ahead {
				c.SyncAhead()
			}
			data := pattern(syncBehindBytes + 100<<10)
			writeAll(c.Stream(Stdout), data, 256<<10)
			finalizeWhole(t, c, data)
			// One flush asked for (the first is never coalesced),
			// then Finalize's fsync.
			want := int64(1)
			if ahead {
				want = 2
			}
			if n := syncs.Load(); n != want {
				t.Errorf("%d fsyncs of stdout (SyncAhead %v)", n, ahead)
			}
			c.Publish(&receipt.Receipt{Schema: receipt.Schema})
		})
	}
}

// TestSyncBehindError: an fsync of the flusher that fails makes the
// capture partial (write_error) although Finalize's own fsync succeeds:
// Linux reports a writeback error to one fsync of an open file only.
func TestSyncBehindError(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	var syncs atomic.Int64
	d.wrapFile = func(stream string, f *os.File) fileWriter {
		if stream == Stdout {
			return syncCounter{File: f, n: &syncs, fail: 1}
		}
		return f
	}
	c, err := d.Create(time.Now(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c.SyncAhead()
	data := pattern(syncBehindBytes + 100<<10)
	writeAll(c.Stream(Stdout), data, 256<<10)
	res, err := c.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	if n := syncs.Load(); n != 2 {
		t.Fatalf("%d fsyncs of stdout, want the flusher's and Finalize's", n)
	}
	if res.State != receipt.CapturePartial || *res.Reason != receipt.ReasonWriteError || res.Error == nil ||
		!strings.Contains(*res.Error, "fsync") || !strings.Contains(*res.Error, "stdout.live") {
		t.Errorf("result %+v", res)
	}
	if res.Stdout.Committed != int64(len(data)) {
		t.Errorf("committed %d, want %d", res.Stdout.Committed, len(data))
	}
	c.Publish(&receipt.Receipt{Schema: receipt.Schema})
}

// finalizeWhole finalizes c and checks that its stdout holds data whole:
// complete, every byte committed, data's sha256.
func finalizeWhole(t *testing.T, c *Capture, data []byte) {
	t.Helper()
	res, err := c.Finalize()
	if err != nil || res.State != receipt.CaptureComplete || res.Stdout.Committed != int64(len(data)) {
		t.Fatalf("result %+v %v", res, err)
	}
	if sum := sha256.Sum256(data); res.Stdout.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 %s, want %x", res.Stdout.SHA256, sum)
	}
}
