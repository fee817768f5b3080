package store

import (
	"errors"
	"github.com/capwrap/capwrap/receipt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// newTestCapture opens a tool-outputs directory in a temporary directory
// and creates a capture in it.
func newTestCapture(t *testing.T) (*Dir, *Capture) {
	t.Helper()
	d, _, err := Open(filepath.Join(t.TempDir(), "tool-outputs"), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	c, err := d.Create(time.Now(), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return d, c
}

// newTestArrival is newTestCapture with the capture's arrival index.
func newTestArrival(t *testing.T) (*Dir, *Capture, *Arrival) {
	t.Helper()
	d, c := newTestCapture(t)
	a, err := c.Arrival(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return d, c, a
}

func readArrival(t *testing.T, d *Dir, id string) ([]ArrivalRecord, bool) {
	t.Helper()
	ar, err := d.OpenArrival(id)
	if err != nil {
		t.Fatal(err)
	}
	defer ar.Close()
	var recs []ArrivalRecord
	for {
		r, err := ar.Next()
		if errors.Is(err, io.EOF) {
			return recs, ar.Full
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
}

func TestArrivalIndex(t *testing.T) {
	d, c, a := newTestArrival(t)
	out, errw := a.Writer(Stdout), a.Writer(Stderr)
	out.Write([]byte("abc"))
	out.Write([]byte("de")) // same stream, same second: extends the record
	errw.Write([]byte("1234"))
	out.Write([]byte("f"))
	errw.Write(nil) // nothing arrived: no record
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(c.AbsPath(), arrivalName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("arrival.idx: %v, mode %v", err, fi.Mode())
	}
	if want := int64(arrivalHeaderSize + 3*arrivalRecordSize); fi.Size() != want {
		t.Errorf("arrival.idx has %d bytes, want %d", fi.Size(), want)
	}
	recs, full := readArrival(t, d, c.ID())
	want := []ArrivalRecord{{Stdout, 0, 5, 0}, {Stderr, 0, 4, 0}, {Stdout, 5, 1, 0}}
	if len(recs) != len(want) || full {
		t.Fatalf("records %+v (full %v), want %+v", recs, full, want)
	}
	for i, r := range recs {
		if r.Stream != want[i].Stream || r.Offset != want[i].Offset || r.Length != want[i].Length || r.Elapsed < 0 || r.Elapsed > time.Minute {
			t.Errorf("record %d = %+v, want %+v", i, r, want[i])
		}
		if i > 0 && r.Elapsed < recs[i-1].Elapsed {
			t.Errorf("record %d elapsed %v before the previous one", i, r.Elapsed)
		}
	}
	if _, err := c.Arrival(time.Now()); err == nil {
		t.Error("a second arrival index replaced the first")
	}
}

// TestArrivalIndexFull: the index stops at MaxArrivalRecords with an end
// mark, whatever the number of chunks; a nil *Arrival does nothing.
func TestArrivalIndexFull(t *testing.T) {
	d, c, a := newTestArrival(t)
	out, errw := a.Writer(Stdout), a.Writer(Stderr)
	for range MaxArrivalRecords/2 + 100 {
		out.Write([]byte("o"))
		errw.Write([]byte("e"))
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	recs, full := readArrival(t, d, c.ID())
	if !full || len(recs) != MaxArrivalRecords-1 {
		t.Fatalf("%d records, full %v; want %d and full", len(recs), full, MaxArrivalRecords-1)
	}
	if last := recs[len(recs)-1]; last.Stream != Stdout || last.Offset != (MaxArrivalRecords-2)/2 {
		t.Errorf("last record %+v", last)
	}
	var nilA *Arrival
	if err := nilA.Close(); err != nil {
		t.Error(err)
	}
}

func TestRemove(t *testing.T) {
	d, c := newTestCapture(t)
	if err := d.Remove(c.ID()); !errors.Is(err, ErrRunning) {
		t.Fatalf("Remove of a running capture: %v, want ErrRunning", err)
	}
	if _, err := os.Stat(c.AbsPath()); err != nil {
		t.Fatalf("running capture touched: %v", err)
	}
	if _, err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	if err := c.Publish(&receipt.Receipt{Schema: receipt.Schema}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"..", "../x", "/etc", c.ID() + "/stdout.log"} {
		if err := d.Remove(bad); !errors.Is(err, ErrBadID) {
			t.Errorf("Remove(%q): %v, want ErrBadID", bad, err)
		}
	}
	if err := d.Remove(c.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.AbsPath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("capture still there: %v", err)
	}
}

func TestOpenExisting(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenExisting(filepath.Join(dir, "missing")); !errors.Is(err, ErrNoDir) {
		t.Errorf("missing: %v, want ErrNoDir", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Error("OpenExisting created the directory")
	}
	os.Symlink(dir, filepath.Join(dir, "link"))
	if _, err := OpenExisting(filepath.Join(dir, "link")); err == nil {
		t.Error("a symlinked tool-outputs directory was opened")
	}
	d, err := OpenExisting(dir)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}

// TestArrivalCountsAgainstDirQuota: arrival.idx is charged to the
// directory quota like the stream files (issue 13 item 8.6): the ledger
// counts it, and the index stops, at a record boundary, where the quota
// does. Output that switches streams at every byte makes 24 bytes of index
// per byte of output.
func TestArrivalCountsAgainstDirQuota(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quota int64
		pairs int // stdout byte, stderr byte
	}{
		{"index stops at the quota", 64 << 10, 5000},
		{"everything fits", 1 << 20, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _, err := Open(filepath.Join(t.TempDir(), "tool-outputs"), true, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			lim := Limits{DirQuota: tc.quota, QuotaChunk: 4 << 10}
			c, err := d.Create(time.Now(), lim)
			if err != nil {
				t.Fatal(err)
			}
			a, err := c.Arrival(time.Now())
			if err != nil || a == nil {
				t.Fatalf("Arrival: %v %v", a, err)
			}
			out := io.MultiWriter(c.Stream(Stdout), a.Writer(Stdout))
			errw := io.MultiWriter(c.Stream(Stderr), a.Writer(Stderr))
			for range tc.pairs {
				out.Write([]byte("o"))
				errw.Write([]byte("e"))
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			res, err := c.Finalize()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Publish(&receipt.Receipt{Schema: receipt.Schema}); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(d.Abs(), c.ID())
			size := func(name string) int64 {
				fi, err := os.Stat(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				return fi.Size()
			}
			streams := size("stdout.log") + size("stderr.log")
			idx := size(arrivalName)
			if streams+idx > tc.quota {
				t.Errorf("streams %d + arrival.idx %d = %d bytes > quota %d", streams, idx, streams+idx, tc.quota)
			}
			if (idx-arrivalHeaderSize)%arrivalRecordSize != 0 {
				t.Errorf("arrival.idx is %d bytes: not whole records", idx)
			}
			d.quotaMu.Lock()
			used, err := d.usage("")
			d.quotaMu.Unlock()
			if err != nil || used != streams+idx {
				t.Errorf("ledger charges %d bytes (%v), want streams %d + index %d", used, err, streams, idx)
			}
			recs, _ := readArrival(t, d, c.ID())
			var covered int64
			for _, r := range recs {
				covered += r.Length
			}
			all := int64(2 * tc.pairs)
			switch {
			case streams+int64(2*tc.pairs)*arrivalRecordSize+arrivalHeaderSize <= tc.quota:
				if res.State != receipt.CaptureComplete || covered != all {
					t.Errorf("state %s, index covers %d of %d bytes", res.State, covered, all)
				}
			case covered >= all || len(recs) == 0:
				t.Errorf("index covers %d of %d bytes in %d records: not stopped by the quota", covered, all, len(recs))
			}
		})
	}
}
