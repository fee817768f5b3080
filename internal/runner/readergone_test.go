package runner

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/capwrap/capwrap/wrap"
)

// TestPipeReaderGone: capwrap's stdout as a pipe polls its reader's
// departure; anything else is not watched.
func TestPipeReaderGone(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	gone := pipeReaderGone(w)
	if gone == nil {
		t.Fatal("a pipe is not watched")
	}
	if gone() {
		t.Error("gone() with the reader still there")
	}
	r.Close()
	if !gone() {
		t.Error("gone() = false once the read end is closed")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "file"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if pipeReaderGone(f) != nil {
		t.Error("a regular file is watched")
	}
}

// TestPipeEnd: the command's stream is closed (wrap.ErrCloseStream) only
// when nothing more can be kept and the reader has gone; the reader is
// asked only while the capture is full, at most once per readerPoll.
func TestPipeEnd(t *testing.T) {
	for _, tc := range []struct {
		name        string
		full, gone  bool
		writes      int
		wantClosed  bool
		wantAsked   int // calls of gone, the writes coming within one readerPoll
		wantErrored int
	}{
		{"room left, reader gone", false, true, 5, false, 0, 0},
		{"full, reader there", true, false, 5, false, 1, 0},
		{"full, reader gone", true, true, 5, true, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked, closed := 0, false
			e := &pipeEnd{w: io.Discard, full: func() bool { return tc.full },
				gone: func() bool { asked++; return tc.gone }, closed: &closed}
			errored, start := 0, time.Now()
			for range tc.writes {
				n, err := e.Write([]byte("y\n"))
				if n != 2 {
					t.Errorf("Write wrote %d bytes, want 2", n)
				}
				if err == wrap.ErrCloseStream {
					errored++
				} else if err != nil {
					t.Errorf("Write: %v", err)
				}
			}
			// A busy machine may spread the writes over more than one
			// readerPoll: one more question per readerPoll elapsed.
			if most := tc.wantAsked + int(time.Since(start)/readerPoll); tc.wantAsked > 0 && asked >= tc.wantAsked && asked <= most {
				asked = tc.wantAsked
			}
			if closed != tc.wantClosed || asked != tc.wantAsked || errored != tc.wantErrored {
				t.Errorf("closed %v, gone asked %d times, ErrCloseStream %d times; want %v, %d, %d",
					closed, asked, errored, tc.wantClosed, tc.wantAsked, tc.wantErrored)
			}
		})
	}
}
