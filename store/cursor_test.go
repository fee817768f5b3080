package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/capwrap/capwrap/receipt"
)

// published is a finished capture of d holding out on stdout.
func published(t *testing.T, d *Dir, out string) *Capture {
	t.Helper()
	c, err := d.Create(time.Now(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c.Stream(Stdout).Write([]byte(out))
	if _, err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	if err := c.Publish(&receipt.Receipt{Schema: receipt.Schema}); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCursorNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"default", true}, {"a", true}, {"agent-1.ui_2", true}, {string(make([]byte, 64)), false},
		{"x123456789x123456789x123456789x123456789x123456789x123456789abcd", true}, // 64
		{"x123456789x123456789x123456789x123456789x123456789x123456789abcde", false},
		{"", false}, {"a/b", false}, {"a b", false}, {"é", false}, {"a\n", false},
	} {
		if got := ValidCursorName(tc.name); got != tc.ok {
			t.Errorf("ValidCursorName(%q) = %v, want %v", tc.name, got, tc.ok)
		}
	}
}

// TestCursorFileFormat: what decodeCursor takes and refuses, and that it
// reads back what encodeCursor writes.
func TestCursorFileFormat(t *testing.T) {
	for _, off := range []int64{0, 1, 9000, 1 << 40} {
		b := encodeCursor("ui", Stderr, off)
		if got, err := decodeCursor(b, "ui", Stderr); err != nil || got != off {
			t.Errorf("round trip of %d: %d, %v (%s)", off, got, err, b)
		}
	}
	if got, want := string(encodeCursor("default", CursorInterleaved, 42)), `{"cursor":"default","stream":"interleaved","next_offset":42}`+"\n"; got != want {
		t.Errorf("encodeCursor = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		in   string
		want int64 // -1: refused
	}{
		{`{"cursor":"a","stream":"stdout","next_offset":7}`, 7},
		{`{"cursor":"a","stream":"stdout","next_offset":7}` + "\n\n", 7},
		{`{"stream":"stdout","cursor":"a","next_offset":0}`, 0},
		{``, -1},
		{`{}`, -1},
		{`garbage`, -1},
		{`{"cursor":"a","stream":"stdout","next_offset":-1}`, -1},
		{`{"cursor":"a","stream":"stdout","next_offset":1.5}`, -1},
		{`{"cursor":"a","stream":"stdout","next_offset":"7"}`, -1},
		{`{"cursor":"b","stream":"stdout","next_offset":7}`, -1},
		{`{"cursor":"a","stream":"stderr","next_offset":7}`, -1},
		{`{"cursor":"a","stream":"stdout","next_offset":7,"extra":1}`, -1},
		{`{"cursor":"a","stream":"stdout","next_offset":7}{"cursor":"a","stream":"stdout","next_offset":8}`, -1},
		{`{"cursor":"a","stream":"stdout","next_offset":7`, -1},
	} {
		got, err := decodeCursor([]byte(tc.in), "a", Stdout)
		switch {
		case tc.want < 0 && err == nil:
			t.Errorf("decodeCursor(%q) = %d, want an error", tc.in, got)
		case tc.want >= 0 && (err != nil || got != tc.want):
			t.Errorf("decodeCursor(%q) = %d, %v, want %d", tc.in, got, err, tc.want)
		}
	}
}

// TestCursorSet: a new cursor is at 0; Set publishes a whole file, 0600,
// leaves no temporary file, survives a stale one, and replaces a
// symbolic link planted at the cursor's name without writing through it.
func TestCursorSet(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	c := published(t, d, "hello\n")
	capDir := c.AbsPath()
	file := filepath.Join(capDir, "cursor.ui.stdout")
	lock := func(name, stream string) *Cursor {
		t.Helper()
		cur, err := d.LockCursor(c.ID(), name, stream)
		if err != nil {
			t.Fatal(err)
		}
		return cur
	}
	offset := func(cur *Cursor) int64 {
		t.Helper()
		off, err := cur.Offset()
		if err != nil {
			t.Fatal(err)
		}
		return off
	}

	cur := lock("ui", Stdout)
	if off := offset(cur); off != 0 {
		t.Errorf("new cursor at %d, want 0", off)
	}
	for _, off := range []int64{6, 3, 6} {
		if err := cur.Set(off); err != nil {
			t.Fatal(err)
		}
		if got := offset(cur); got != off {
			t.Errorf("after Set(%d): %d", off, got)
		}
	}
	if got := mode(t, file); got != 0o600 {
		t.Errorf("cursor file mode %v, want 0600", got)
	}
	if _, err := os.Lstat(file + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary file left: %v", err)
	}
	if err := cur.Set(-1); err == nil {
		t.Error("Set(-1) accepted")
	}
	cur.Close()

	// Another consumer, another stream: their own files, from 0.
	for _, other := range []*Cursor{lock("other", Stdout), lock("ui", Stderr), lock("ui", CursorInterleaved)} {
		if off := offset(other); off != 0 {
			t.Errorf("cursor %s.%s at %d, want 0", other.name, other.stream, off)
		}
		other.Close()
	}

	// A .tmp left by a crashed holder does not wedge the cursor.
	if err := os.WriteFile(file+".tmp", []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	cur = lock("ui", Stdout)
	if err := cur.Set(5); err != nil {
		t.Fatalf("Set over a stale temporary file: %v", err)
	}
	if got := offset(cur); got != 5 {
		t.Errorf("after a stale .tmp: %d, want 5", got)
	}
	cur.Close()

	// A symbolic link at the cursor's name is refused, not followed, and
	// Set replaces it; its target is untouched.
	target := filepath.Join(t.TempDir(), "target")
	os.WriteFile(target, encodeCursor("ui", Stdout, 1), 0o600)
	os.Remove(file)
	if err := os.Symlink(target, file); err != nil {
		t.Fatal(err)
	}
	cur = lock("ui", Stdout)
	if off, err := cur.Offset(); err == nil {
		t.Errorf("Offset through a symbolic link: %d", off)
	}
	if err := cur.Set(4); err != nil {
		t.Fatal(err)
	}
	if got := offset(cur); got != 4 {
		t.Errorf("after replacing the link: %d, want 4", got)
	}
	cur.Close()
	if b, _ := os.ReadFile(target); string(b) != string(encodeCursor("ui", Stdout, 1)) {
		t.Errorf("the link's target was written: %q", b)
	}

	// A hard link to the cursor file is refused; so is a garbled file.
	if err := os.Link(file, filepath.Join(t.TempDir(), "hard")); err == nil {
		cur = lock("ui", Stdout)
		if off, err := cur.Offset(); err == nil {
			t.Errorf("Offset of a file with two links: %d", off)
		}
		cur.Close()
	}
	os.Remove(file)
	os.WriteFile(file, []byte("not json"), 0o600)
	cur = lock("ui", Stdout)
	if off, err := cur.Offset(); err == nil {
		t.Errorf("Offset of a garbled file: %d", off)
	}
	cur.Close()
}

func TestLockCursorRefuses(t *testing.T) {
	base := t.TempDir()
	d := mustOpen(t, base)
	c := published(t, d, "x")
	for _, tc := range []struct {
		id, name, stream string
		is               error
	}{
		{c.ID(), "a/b", Stdout, ErrBadCursor},
		{c.ID(), "", Stdout, ErrBadCursor},
		{c.ID(), "a", "both", ErrBadCursor},
		{"../x", "a", Stdout, ErrBadID},
		{"20990101T000000Z-aaaaaaaaaa", "a", Stdout, fs.ErrNotExist},
	} {
		cur, err := d.LockCursor(tc.id, tc.name, tc.stream)
		if !errors.Is(err, tc.is) {
			t.Errorf("LockCursor(%q, %q, %q) = %v, want %v", tc.id, tc.name, tc.stream, err, tc.is)
		}
		if err == nil {
			cur.Close()
		}
	}
	// A capture directory that is a symbolic link is refused.
	link := "20990101T000000Z-bbbbbbbbbb"
	if err := os.Symlink(c.ID(), filepath.Join(base, link)); err != nil {
		t.Fatal(err)
	}
	if cur, err := d.LockCursor(link, "a", Stdout); err == nil {
		cur.Close()
		t.Error("LockCursor through a symbolic link to a capture directory")
	}
	if _, err := d.MarkNotified(link, "a"); err == nil {
		t.Error("MarkNotified through a symbolic link to a capture directory")
	}
}

// TestCursorLockExcludes: a second holder of the same cursor waits for
// the first to Close; another consumer or stream does not.
func TestCursorLockExcludes(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	c := published(t, d, "x")
	first, err := d.LockCursor(c.ID(), "a", Stdout)
	if err != nil {
		t.Fatal(err)
	}
	for _, free := range [][2]string{{"b", Stdout}, {"a", Stderr}} {
		cur, err := d.LockCursor(c.ID(), free[0], free[1])
		if err != nil {
			t.Fatal(err)
		}
		cur.Close()
	}
	got := make(chan *Cursor)
	go func() {
		cur, err := d.LockCursor(c.ID(), "a", Stdout)
		if err != nil {
			t.Error(err)
		}
		got <- cur
	}()
	select {
	case cur := <-got:
		cur.Close()
		t.Fatal("a second holder of the cursor did not wait")
	case <-time.After(100 * time.Millisecond):
	}
	first.Set(1)
	first.Close()
	second := <-got
	defer second.Close()
	if off, err := second.Offset(); err != nil || off != 1 {
		t.Errorf("the second holder sees %d, %v; want 1", off, err)
	}
}

// TestMarkNotified: of concurrent calls for one consumer exactly one is
// first; another consumer has its own record.
func TestMarkNotified(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	c := published(t, d, "x")
	var wg sync.WaitGroup
	var mu sync.Mutex
	firsts := 0
	for range 20 {
		wg.Go(func() {
			first, err := d.MarkNotified(c.ID(), "ui")
			if err != nil {
				t.Error(err)
			}
			if first {
				mu.Lock()
				firsts++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firsts != 1 {
		t.Errorf("%d calls were first, want 1", firsts)
	}
	if first, err := d.MarkNotified(c.ID(), "other"); !first || err != nil {
		t.Errorf("another consumer: %v, %v; want its own first", first, err)
	}
	if got := mode(t, filepath.Join(c.AbsPath(), "notified.ui")); got != 0o600 {
		t.Errorf("notified file mode %v, want 0600", got)
	}
	if _, err := d.MarkNotified(c.ID(), "a b"); !errors.Is(err, ErrBadCursor) {
		t.Errorf("bad name: %v", err)
	}
}
