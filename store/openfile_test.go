package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestClipArrival: a running capture's index, cut to the stream bytes an
// export copied: records past them dropped, one that ends past them cut,
// a torn last record dropped, the end mark kept.
func TestClipArrival(t *testing.T) {
	type rec struct {
		stream uint8
		off, n int64
	}
	index := func(recs []rec, torn bool) []byte {
		b := []byte(arrivalMagic)
		for i, r := range recs {
			var e [arrivalRecordSize]byte
			arrivalRec{stream: r.stream, offset: r.off, length: r.n, elapsed: time.Duration(i) * time.Microsecond}.encode(e[:])
			b = append(b, e[:]...)
		}
		if torn {
			b = append(b, 1, 2, 3)
		}
		return b
	}
	all := []rec{{0, 0, 5}, {1, 0, 4}, {0, 5, 10}, {1, 4, 2}, {0, 15, 3}}
	tests := []struct {
		name           string
		in             []rec
		torn           bool
		stdout, stderr int64
		want           []rec
	}{
		{"everything copied", all, false, 18, 6, all},
		{"a torn last record", all, true, 18, 6, all},
		{"stdout cut inside a record", all, false, 9, 6, []rec{{0, 0, 5}, {1, 0, 4}, {0, 5, 4}, {1, 4, 2}}},
		{"stdout cut at a record's start", all, false, 5, 6, []rec{{0, 0, 5}, {1, 0, 4}, {1, 4, 2}}},
		{"no stderr", all, false, 18, 0, []rec{{0, 0, 5}, {0, 5, 10}, {0, 15, 3}}},
		{"nothing", all, false, 0, 0, nil},
		{"end mark kept", append(all[:2:2], rec{arrivalEndMark, 0, 0}), false, 18, 6, []rec{{0, 0, 5}, {1, 0, 4}, {arrivalEndMark, 0, 0}}},
	}
	for _, tt := range tests {
		got, err := ClipArrival(bytes.NewReader(index(tt.in, tt.torn)), tt.stdout, tt.stderr)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		// Elapsed times are the input's: rebuild the expected records
		// with the elapsed of the record they came from.
		var want []byte
		want = append(want, arrivalMagic...)
		for _, w := range tt.want {
			for i, r := range tt.in {
				if r.stream == w.stream && r.off == w.off {
					var e [arrivalRecordSize]byte
					arrivalRec{stream: w.stream, offset: w.off, length: w.n, elapsed: time.Duration(i) * time.Microsecond}.encode(e[:])
					want = append(want, e[:]...)
					break
				}
			}
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: got %x\nwant %x", tt.name, got, want)
		}
	}
	if _, err := ClipArrival(bytes.NewReader([]byte("not an index at all")), 1, 1); err == nil {
		t.Error("ClipArrival of a file that is not an index: no error")
	}
	bad := index(all[:1], false)
	bad[arrivalHeaderSize+12] = 7
	if _, err := ClipArrival(bytes.NewReader(bad), 10, 10); err == nil {
		t.Error("ClipArrival of a record with stream byte 7: no error")
	}
	if n := binary.LittleEndian.Uint32(index(all, false)[arrivalHeaderSize+8:]); n != 5 {
		t.Fatalf("fixture: first record length %d", n)
	}
}

// TestOpenFile: the layout's names open; another name, a symbolic link, a
// FIFO or a file with two hard links is refused.
func TestOpenFile(t *testing.T) {
	d, c := newTestCapture(t)
	c.Drain()
	dir := filepath.Join(d.Abs(), c.ID())
	if err := os.WriteFile(filepath.Join(dir, PreviewFile), []byte("p"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("stdout.live", filepath.Join(dir, ArrivalFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "stderr.live"), filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ok   bool
		is   error
	}{
		{StreamFile(Stdout, true), true, nil},
		{PreviewFile, true, nil},
		{StreamFile(Stdout, false), false, fs.ErrNotExist},
		{ReceiptFile, false, fs.ErrNotExist},
		{ArrivalFile, false, nil},                         // a symbolic link
		{StreamFile(Stderr, true), false, nil},            // two hard links
		{"reservation", false, ErrNotCaptureFile},         // not the layout's
		{"control", false, ErrNotCaptureFile},             // nor is a job's FIFO
		{"../" + c.ID() + "/x", false, ErrNotCaptureFile}, // nor a path
	}
	for _, tt := range tests {
		f, err := d.OpenFile(c.ID(), tt.name)
		if f != nil {
			f.Close()
		}
		switch {
		case tt.ok && err != nil:
			t.Errorf("OpenFile(%s): %v", tt.name, err)
		case !tt.ok && err == nil:
			t.Errorf("OpenFile(%s): no error", tt.name)
		case tt.is != nil && !errors.Is(err, tt.is):
			t.Errorf("OpenFile(%s): %v, want %v", tt.name, err, tt.is)
		}
	}
}
