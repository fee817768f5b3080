package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capwrap/capwrap/redact"
	"github.com/capwrap/capwrap/store"
)

// testLazyCapture opens a tool-outputs directory under a fresh temporary
// directory and returns it (its path is root) with a lazyCapture that
// creates its capture there with limits lim, counting each creation in
// *made when made is not nil; errors go to t.
func testLazyCapture(t *testing.T, lim store.Limits, made *int) (lc *lazyCapture, root string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "to")
	dir, _, err := store.Open(root, true, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	return &lazyCapture{started: time.Now(), warnf: t.Logf, onError: func(err error) { t.Error(err) },
		create: func() (*store.Capture, error) {
			if made != nil {
				*made++
			}
			return dir.Create(time.Now(), lim)
		}}, root
}

// TestLazyCaptureMadeAtFirstByte: no directory until a stream gets a byte;
// then one capture, made once for both streams, holds the bytes.
func TestLazyCaptureMadeAtFirstByte(t *testing.T) {
	made := 0
	lc, root := testLazyCapture(t, store.DefaultLimits(), &made)
	out, errs := lc.stream("stdout"), lc.stream("stderr")
	if c, err := lc.made(); c != nil || err != nil || made != 0 {
		t.Fatalf("capture made before any byte: %v %v", c, err)
	}
	if ids := captures(t, root); len(ids) != 0 {
		t.Fatalf("directory has %v before any byte", ids)
	}
	var wg sync.WaitGroup
	for _, w := range []struct {
		w interface{ Write([]byte) (int, error) }
		s string
	}{{out, "out\n"}, {errs, "err\n"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.w.Write([]byte(w.s))
		}()
	}
	wg.Wait()
	c, err := lc.made()
	if c == nil || err != nil || made != 1 {
		t.Fatalf("made %d times, capture %v, error %v", made, c, err)
	}
	if err := lc.closeArrival(); err != nil {
		t.Fatal(err)
	}
	res, err := c.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout.Committed != 4 || res.Stderr.Committed != 4 {
		t.Fatalf("committed %d and %d bytes, want 4 and 4", res.Stdout.Committed, res.Stderr.Committed)
	}
	if ids := captures(t, root); len(ids) != 1 || ids[0] != c.ID() {
		t.Fatalf("directory has %v, want [%s]", ids, c.ID())
	}
	if _, err := os.Stat(filepath.Join(c.AbsPath(), "arrival.idx")); err != nil {
		t.Fatalf("no arrival index: %v", err)
	}
}

// TestLazyCaptureCreateFails: a failure to create is reported once, the
// writes still succeed (the preview and the terminal get the bytes) and
// every later get returns the same error.
func TestLazyCaptureCreateFails(t *testing.T) {
	boom := errors.New("no space left on device")
	var reported []error
	lc := &lazyCapture{started: time.Now(), warnf: t.Logf, onError: func(err error) { reported = append(reported, err) },
		create: func() (*store.Capture, error) { return nil, boom }}
	w := lc.stream("stdout")
	for i := 0; i < 3; i++ {
		if n, err := w.Write([]byte("abc")); n != 3 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if c, err := lc.get(); c != nil || err != boom {
		t.Fatalf("get = %v, %v", c, err)
	}
	if len(reported) != 1 || reported[0] != boom {
		t.Fatalf("reported %v, want the error once", reported)
	}
	if err := lc.closeArrival(); err != nil {
		t.Fatal(err)
	}
	if id := lc.id(); !strings.Contains(id, "none") {
		t.Fatalf("id() = %q", id)
	}
}

// captures lists the capture directories in root.
func captures(t *testing.T, root string) []string {
	t.Helper()
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range ents {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids
}

// TestSinkReleasesEachStep: the sink holds the capture file's writer only
// for the step that hands on a read (StreamWriter.Hold): once Write
// returns, what it handed on is written to the file without any further
// Write, Close or drain.
func TestSinkReleasesEachStep(t *testing.T) {
	lc, _ := testLazyCapture(t, store.DefaultLimits(), nil)
	file := lc.stream(store.Stdout)
	s := &sink{dst: file, ready: func() (*redact.Policy, error) { return redact.NewPolicy(redact.Options{}) }, file: file}
	line := []byte(strings.Repeat("a plain line of output\n", 100))
	for range 3 {
		s.Write(line)
		_, out := s.ledger.counts()
		c, err := lc.made()
		if err != nil || c == nil {
			t.Fatalf("capture %v, %v", c, err)
		}
		// The writer goroutine writes on its own: wait for it (a
		// partial chunk still held would never come).
		for deadline := time.Now().Add(30 * time.Second); c.Stream(store.Stdout).Committed() != out; {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d bytes handed on reached the file", c.Stream(store.Stdout).Committed(), out)
			}
			time.Sleep(time.Millisecond)
		}
	}
	s.Close()
	lc.closeArrival()
	if c, _ := lc.made(); c != nil {
		c.Discard()
	}
}
