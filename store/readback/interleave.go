package readback

// Interleaved reads (SPEC §8 `capwrap read --interleaved`): both streams
// of a capture merged in the order of arrival its arrival index recorded
// (arrival.go), each output line labeled by stream.

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/capwrap/capwrap/store"
)

// Labels of an interleaved read: a line's first piece, and the rest of a
// line that the other stream's chunk interrupted.
var (
	labelStart = [2]string{"stdout| ", "stderr| "}
	labelCont  = [2]string{"stdout+ ", "stderr+ "}
)

// interleaver prints chunks of both streams in arrival order, each output
// line labeled by stream, from merged offset offset on, within a byte
// budget (labels included). Stream 0 is stdout, 1 stderr.
type interleaver struct {
	w        *bufio.Writer
	files    [2]io.ReaderAt
	sizes    [2]int64 // committed bytes of each stream
	offset   int64    // merged offset of the first byte to print
	left     int64    // output budget, bytes
	merged   int64    // merged offset of the next byte: both streams' bytes in arrival order
	covered  [2]int64 // bytes of each stream the arrival index accounts for
	midLine  int      // stream whose line is open on the output, -1 when at a line start
	lineOpen [2]bool  // the stream's last byte printed was not a newline
	buf      []byte
	printed  bool
}

func newInterleaver(w *bufio.Writer, files [2]io.ReaderAt, sizes [2]int64, offset, limit int64) *interleaver {
	return &interleaver{w: w, files: files, sizes: sizes, offset: offset, left: limit, midLine: -1, buf: make([]byte, scanBlock)}
}

// readInterleaved prints both streams of capture e merged in the order of
// arrival recorded in its arrival index, from merged offset q.Offset, at
// most q.Limit bytes with labels.
func readInterleaved(d *store.Dir, w *bufio.Writer, e store.Entry, q Query) (Status, error) {
	st := Status{Stream: StreamInterleaved, Final: e.Final && !e.Running, Running: e.Running}
	var files [2]io.ReaderAt
	var sizes [2]int64
	for i, name := range []string{store.Stdout, store.Stderr} {
		f, size, err := openSized(d, e.ID, name)
		if err != nil {
			return st, err
		}
		defer f.Close()
		files[i], sizes[i] = f, size
	}
	st.Size = sizes[0] + sizes[1]
	ar, err := d.OpenArrival(e.ID)
	if err != nil {
		return st, err
	}
	defer ar.Close()
	warn := func(rest [2]int64) {
		if q.Warnf != nil {
			q.Warnf("the arrival index of %s ends before the output does (index full or not written); the remaining %d bytes of stdout and %d of stderr follow stream by stream",
				e.ID, rest[0], rest[1])
		}
	}
	iv := newInterleaver(w, files, sizes, q.Offset, q.Limit)
	st.NextOffset, st.Truncated, err = iv.run(ar.Next, e.Running, warn)
	return st, err
}

// run prints the chunks that next yields (io.EOF at the end) in their
// order. For a running capture it stops at the first chunk not yet
// committed. Bytes the records do not cover (a full index) follow, stream
// by stream, after uncovered is told how many of each stream that is;
// not for a running capture, whose index may still grow. It returns the
// merged offset to continue at and whether the budget ran out first.
func (iv *interleaver) run(next func() (store.ArrivalRecord, error), running bool, uncovered func(rest [2]int64)) (nextOffset int64, truncated bool, err error) {
	for {
		rec, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return iv.merged, false, err
		}
		s := 0
		if rec.Stream == store.Stderr {
			s = 1
		}
		end := min(rec.Offset+rec.Length, iv.sizes[s])
		start := min(rec.Offset, end)
		if end-start < rec.Length && running {
			// Not committed yet: the order past here is not known.
			return iv.merged, false, nil
		}
		iv.covered[s] = max(iv.covered[s], end)
		if ok, err := iv.emit(s, start, end-start); err != nil || !ok {
			return iv.merged, err == nil, err
		}
	}
	if !running && (iv.covered[0] < iv.sizes[0] || iv.covered[1] < iv.sizes[1]) {
		uncovered([2]int64{iv.sizes[0] - iv.covered[0], iv.sizes[1] - iv.covered[1]})
		for s := range 2 {
			if iv.covered[s] >= iv.sizes[s] {
				continue
			}
			if ok, err := iv.emit(s, iv.covered[s], iv.sizes[s]-iv.covered[s]); err != nil || !ok {
				return iv.merged, err == nil, err
			}
		}
	}
	if iv.midLine >= 0 && iv.left > 0 {
		iv.w.WriteByte('\n') // end the last labeled line
	}
	return max(iv.merged, iv.offset), false, nil
}

// emit prints bytes [off, off+n) of stream s, less what lies before the
// merged offset to start at; false when the budget ran out first.
func (iv *interleaver) emit(s int, off, n int64) (bool, error) {
	if iv.merged+n <= iv.offset {
		iv.merged += n
		return true, nil
	}
	if skip := iv.offset - iv.merged; skip > 0 {
		off, n, iv.merged = off+skip, n-skip, iv.merged+skip
	}
	if !iv.printed {
		iv.lineOpen[s] = !startsLine(iv.files[s], off)
	}
	done, err := iv.chunk(s, off, n)
	iv.merged += done
	return done == n, err
}

// chunk prints bytes [off, off+n) of stream s; it returns how many data
// bytes it printed (fewer than n when the budget ran out).
func (iv *interleaver) chunk(s int, off, n int64) (int64, error) {
	var done int64
	for done < n {
		k := min(int64(len(iv.buf)), n-done)
		if err := readBlock(iv.files[s], iv.buf[:k], off+done); err != nil {
			return done, err
		}
		for b := iv.buf[:k]; len(b) > 0; {
			i := bytes.IndexByte(b, '\n')
			piece := b
			if i >= 0 {
				piece = b[:i+1]
			}
			printed, more := iv.piece(s, piece)
			done += int64(printed)
			if !more {
				return done, nil
			}
			b = b[len(piece):]
		}
	}
	return done, nil
}

// piece prints piece, at most one line of stream s, with the label (and
// the newline ending the other stream's open line) it needs: whole while
// it fits in the budget; cut only when nothing has been printed yet. It
// returns the data bytes printed and whether the budget allows more.
func (iv *interleaver) piece(s int, piece []byte) (int, bool) {
	var pre string
	if iv.midLine >= 0 && iv.midLine != s {
		pre = "\n"
	}
	if iv.midLine != s {
		if iv.lineOpen[s] {
			pre += labelCont[s]
		} else {
			pre += labelStart[s]
		}
	}
	cut := false
	if int64(len(pre)+len(piece)) > iv.left {
		if iv.printed || int64(len(pre))+1 > iv.left {
			return 0, false
		}
		piece, cut = piece[:iv.left-int64(len(pre))], true
	}
	iv.w.WriteString(pre)
	iv.w.Write(piece) // a write error comes back from the flush
	iv.left -= int64(len(pre) + len(piece))
	iv.printed = true
	iv.lineOpen[s] = piece[len(piece)-1] != '\n'
	if iv.lineOpen[s] {
		iv.midLine = s
	} else {
		iv.midLine = -1
	}
	return len(piece), !cut
}

// startsLine reports whether offset off of r starts a line.
func startsLine(r io.ReaderAt, off int64) bool {
	if off == 0 {
		return true
	}
	var b [1]byte
	_, err := r.ReadAt(b[:], off-1)
	return err == nil && b[0] == '\n'
}
