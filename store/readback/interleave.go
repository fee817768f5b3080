package readback

// Interleaved reads (SPEC §8 `capwrap read --interleaved`): both streams
// of a capture merged in the order of arrival its arrival index recorded
// (arrival.go), each output line labeled by stream.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"

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
	// live: a followed read, whose last line may still grow: run does not
	// end it with a newline until the capture is no longer running.
	live bool
	// until, when not nil, holds each stream's matcher of Query.Until; the
	// first matching line printed stops the read (matched).
	until   *[2]lineMatcher
	matched int // 1 + the stream whose line matched; 0: none
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
			return iv.merged, err == nil && iv.matched == 0, err
		}
	}
	if !running && (iv.covered[0] < iv.sizes[0] || iv.covered[1] < iv.sizes[1]) {
		uncovered([2]int64{iv.sizes[0] - iv.covered[0], iv.sizes[1] - iv.covered[1]})
		for s := range 2 {
			if iv.covered[s] >= iv.sizes[s] {
				continue
			}
			if ok, err := iv.emit(s, iv.covered[s], iv.sizes[s]-iv.covered[s]); err != nil || !ok {
				return iv.merged, err == nil && iv.matched == 0, err
			}
		}
	}
	if iv.midLine >= 0 && iv.left > 0 && !(iv.live && running) {
		iv.w.WriteByte('\n') // end the last labeled line
		iv.midLine = -1
	}
	return max(iv.merged, iv.offset), false, nil
}

// emit prints bytes [off, off+n) of stream s, less what lies before the
// merged offset to start at; false when the budget ran out first or a
// line matched Query.Until.
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
	return done == n && iv.matched == 0, err
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
	if iv.until != nil && iv.until[s].feed(piece) {
		iv.matched = s + 1
		return len(piece), false
	}
	return len(piece), !cut
}

// followInterleaved is a followed interleaved read (SPEC §8 `read --follow
// --interleaved`): it prints both streams of capture e in their order of
// arrival as they grow, from merged offset q.Offset, until the capture is
// no longer running, q.Limit bytes (labels included) were printed,
// q.FollowTimeout passed, or a line of either stream matched q.Until. The
// arrival index is read again at each look (its last record may grow); a
// look prints only chunks whose bytes are committed.
func followInterleaved(d *store.Dir, w *bufio.Writer, e store.Entry, q Query) (Status, error) {
	st := Status{Stream: StreamInterleaved}
	var files [2]*os.File
	for i, name := range []string{store.Stdout, store.Stderr} {
		f, _, err := openSized(d, e.ID, name)
		if err != nil {
			return st, err
		}
		defer f.Close()
		files[i] = f
	}
	var deadline time.Time
	if q.FollowTimeout > 0 {
		deadline = time.Now().Add(q.FollowTimeout)
	}
	iv := newInterleaver(w, [2]io.ReaderAt{files[0], files[1]}, [2]int64{}, q.Offset, q.Limit)
	iv.live = true
	if q.Until != nil {
		iv.until = &[2]lineMatcher{{re: q.Until}, {re: q.Until}}
	}
	pos := q.Offset
	for {
		cur, err := d.Entry(e.ID) // first the state, then the sizes
		if errors.Is(err, fs.ErrNotExist) {
			cur, err = store.Entry{ID: e.ID, Final: true}, nil
			st.Removed = true
		}
		if err != nil {
			return st, err
		}
		st.Running, st.Final = cur.Running, cur.Final && !cur.Running
		for i, f := range files {
			fi, err := f.Stat()
			if err != nil {
				return st, err
			}
			iv.sizes[i] = fi.Size()
		}
		st.Size = iv.sizes[0] + iv.sizes[1]
		ar, err := d.OpenArrival(e.ID)
		if err != nil {
			return st, err
		}
		iv.merged, iv.covered, iv.offset = 0, [2]int64{}, pos
		warn := func(rest [2]int64) {
			if q.Warnf != nil {
				q.Warnf("the arrival index of %s ends before the output does (index full or not written); the remaining %d bytes of stdout and %d of stderr follow stream by stream",
					e.ID, rest[0], rest[1])
			}
		}
		pos, st.Truncated, err = iv.run(ar.Next, cur.Running, warn)
		ar.Close()
		st.NextOffset = pos
		if err != nil {
			return st, err
		}
		if err := w.Flush(); err != nil {
			return st, err
		}
		switch {
		case iv.matched > 0:
			st.Matched = true
			st.MatchStream = [2]string{store.Stdout, store.Stderr}[iv.matched-1]
			st.MatchLine = string(iv.until[iv.matched-1].hit)
			if iv.midLine >= 0 { // the match ends its line: no open line is left
				iv.midLine = -1
			}
			return st, nil
		case st.Truncated:
			return st, nil
		case iv.left == 0:
			st.Truncated = cur.Running || pos < st.Size
			return st, nil
		case !cur.Running:
			return st, nil
		case !deadline.IsZero() && time.Now().After(deadline):
			st.TimedOut = true
			if iv.midLine >= 0 {
				w.WriteByte('\n') // end the open labeled line: the output ends here
			}
			return st, w.Flush()
		}
		time.Sleep(followPoll)
	}
}

// arrivedBefore returns how many bytes of the other stream than stream
// had arrived at capwrap before byte off of stream, by capture id's
// arrival index (an error when it has none).
func arrivedBefore(d *store.Dir, id, stream string, off int64) (int64, error) {
	ar, err := d.OpenArrival(id)
	if err != nil {
		return 0, err
	}
	defer ar.Close()
	var other int64
	for {
		rec, err := ar.Next()
		if errors.Is(err, io.EOF) {
			return other, nil
		}
		if err != nil {
			return 0, err
		}
		if rec.Stream != stream {
			other = max(other, rec.Offset+rec.Length)
		} else if rec.Offset+rec.Length > off {
			return other, nil
		}
	}
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
