package main

// `capwrap read` (SPEC §8): bounded reads of one stream of a capture by
// byte range, line range or regular expression, --follow of a running
// capture, and --interleaved, both streams in their order of arrival at
// capwrap. Whatever the mode, stdout gets at most --limit bytes and stderr
// ends with one machine-readable line:
//
//	capwrap-read {"stream":"stdout","next_offset":65536,"size":1288895,"final":true,"running":false,"truncated":true}
//
// next_offset is where to continue with --offset; size the stream's
// committed bytes when it was read; final whether the capture is finished
// (the stream will never change); running whether its writer still runs
// (neither: abandoned); truncated whether the output stopped (at --limit
// or --max) before the end of what was asked. next_line (line modes, when
// known) and matches (--grep) are added when they apply. For
// --interleaved, stream is "interleaved" and offsets count the bytes of
// both streams in arrival order (labels not included).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/capwrap/capwrap/store"
)

// Defaults and bounds of `capwrap read`.
const (
	readDefaultLimit = 64 << 10               // --limit default, bytes
	grepBlock        = 256 << 10              // longest line --grep matches whole, bytes
	followPoll       = 100 * time.Millisecond // how often --follow looks for new bytes
	readStatusPrefix = "capwrap-read "
)

// readStatus is the line `capwrap read` ends its stderr with.
type readStatus struct {
	Stream     string `json:"stream"`
	NextOffset int64  `json:"next_offset"`
	Size       int64  `json:"size"`
	Final      bool   `json:"final"`
	Running    bool   `json:"running"`
	Truncated  bool   `json:"truncated"`
	NextLine   *int64 `json:"next_line,omitempty"`
	Matches    *int   `json:"matches,omitempty"`
	// Removed says the capture ended and was not kept (--keep auto on a
	// compact success, --keep never) while --follow read it.
	Removed bool `json:"removed,omitempty"`
}

// readOpts are the flags of `capwrap read`.
type readOpts struct {
	stream      string
	offset      int64
	limit       int64
	lines       lineRange
	hasLines    bool
	grep        *regexp.Regexp
	max         int
	follow      bool
	interleaved bool
}

// limitWriter passes on at most left bytes and counts what it wrote.
type limitWriter struct {
	w       *bufio.Writer
	left    int64
	written int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.w.Write(p)
	l.left -= int64(n)
	l.written += int64(n)
	return n, err
}

func verbRead(args []string, o *options, stdout io.Writer, d diag) int {
	const usage = "capwrap read ID [--stream stdout|stderr] [--offset N] [--limit N] [--lines A:B] [--grep REGEX [--max N]] [--follow] [--interleaved]"
	fs := verbFlags("read")
	var ro readOpts
	var offset, limit size = 0, readDefaultLimit
	var lines, grep string
	fs.StringVarP(&ro.stream, "stream", "s", "stdout", "the stream to read: stdout or stderr")
	fs.Var(&offset, "offset", "start at this byte offset (bytes, or 64K, 1M...)")
	fs.Var(&limit, "limit", "print at most this many bytes")
	fs.StringVarP(&lines, "lines", "n", "", "lines A:B, 1-based, inclusive; negative counts from the end (-50: is the last 50)")
	fs.StringVarP(&grep, "grep", "e", "", "print the lines matching this regular expression, with line numbers")
	fs.IntVar(&ro.max, "max", 0, "with --grep: stop after this many matching lines (0: no limit but --limit)")
	fs.BoolVarP(&ro.follow, "follow", "f", false, "wait for new bytes of a running capture until it ends")
	fs.BoolVar(&ro.interleaved, "interleaved", false, "stdout and stderr merged in their order of arrival at capwrap")
	if !parseVerb(fs, args, 1, usage, d) {
		return verbUsage
	}
	ro.offset, ro.limit = int64(offset), int64(limit)
	usageErr := func(format string, a ...any) int {
		d.errorf("read: "+format, a...)
		d.hintf("usage: %s (capwrap help read)", usage)
		return verbUsage
	}
	if ro.stream != store.Stdout && ro.stream != store.Stderr {
		return usageErr("invalid --stream %q: want stdout or stderr", ro.stream)
	}
	if ro.limit <= 0 {
		return usageErr("invalid --limit %d: must be at least 1 byte", ro.limit)
	}
	if ro.max < 0 {
		return usageErr("invalid --max %d: must not be negative", ro.max)
	}
	if fs.Changed("max") && grep == "" {
		return usageErr("--max needs --grep")
	}
	if lines != "" {
		lr, err := parseLineRange(lines)
		if err != nil {
			return usageErr("%v", err)
		}
		ro.lines, ro.hasLines = lr, true
		if fs.Changed("offset") {
			return usageErr("--offset and --lines exclude each other")
		}
	}
	if grep != "" {
		re, err := regexp.Compile(grep)
		if err != nil {
			return usageErr("invalid --grep: %v", err)
		}
		ro.grep = re
	}
	switch {
	case ro.follow && ro.grep != nil:
		return usageErr("--follow and --grep exclude each other")
	case ro.follow && ro.interleaved:
		return usageErr("--follow and --interleaved exclude each other")
	case ro.follow && ro.hasLines && ro.lines.B != 0:
		return usageErr("--follow reads to the end: give --lines A: without an end")
	case ro.interleaved && (fs.Changed("stream") || ro.hasLines || ro.grep != nil):
		return usageErr("--interleaved reads both streams by --offset and --limit; it takes no --stream, --lines or --grep")
	}

	dir, e, st := openCapture(o, fs.Arg(0), d)
	if dir == nil {
		return st
	}
	defer dir.Close()
	id := e.ID
	var err error
	w := bufio.NewWriterSize(stdout, 32<<10)
	var status readStatus
	if ro.interleaved {
		status, err = readInterleaved(w, dir, e, ro, d)
	} else {
		status, err = readStream(w, dir, e, ro)
	}
	if ferr := w.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		d.errorf("read %s: %v", id, unwrapPath(err))
		return verbFailed
	}
	switch {
	case status.Running && !ro.follow:
		d.hintf("capture %s is still running: this is the %d bytes committed so far; --follow waits for the rest", id, status.Size)
	case status.Removed:
		d.hintf("capture %s ended and was not kept (--keep auto keeps no compact success): all of it was read before it went", id)
	case !status.Final && !status.Running:
		d.warnf("capture %s was abandoned (capwrap ended without a receipt): the stream holds what was committed", id)
	}
	if status.Truncated {
		switch {
		case ro.hasLines && status.NextLine != nil:
			end := ""
			if ro.lines.B != 0 {
				end = strconv.FormatInt(ro.lines.B, 10)
			}
			d.hintf("more follows: continue with --lines %d:%s", *status.NextLine, end)
		case ro.hasLines:
			d.hintf("more follows: continue with --offset %d instead of --lines", status.NextOffset)
		default:
			d.hintf("more follows: continue with --offset %d", status.NextOffset)
		}
	}
	line, _ := json.Marshal(status)
	fmt.Fprintf(d.w, "%s%s\n", readStatusPrefix, line)
	return 0
}

// openSized opens a stream file of capture id and returns its size in
// bytes now: what a read of a running capture may return (committed bytes).
func openSized(dir *store.Dir, id, stream string) (*os.File, int64, error) {
	f, _, err := dir.OpenStream(id, stream)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// readStream reads one stream of capture e as ro says: a byte range, a
// line range (whole lines while they fit in --limit), --grep matches or
// --follow.
func readStream(w *bufio.Writer, dir *store.Dir, e store.Entry, ro readOpts) (readStatus, error) {
	st := readStatus{Stream: ro.stream, Final: e.Final && !e.Running, Running: e.Running}
	f, size, err := openSized(dir, e.ID, ro.stream)
	if err != nil {
		return st, err
	}
	defer f.Close()
	st.Size = size
	buf := make([]byte, scanBlock)

	lo, hi := ro.offset, max(size, ro.offset)
	if ro.hasLines {
		if lo, hi, err = ro.lines.resolve(f, size, buf); err != nil {
			return st, err
		}
	}
	var firstLine int64 // line number of lo, 0 when not computed
	switch {
	case ro.hasLines && ro.lines.A > 0:
		firstLine = ro.lines.A
	case lo == 0:
		firstLine = 1
	case ro.grep != nil:
		n, err := countLines(f, lo, buf)
		if err != nil {
			return st, err
		}
		firstLine = n + 1
	}

	switch {
	case ro.grep != nil:
		g, err := grepRange(w, f, lo, hi, firstLine, ro.grep, ro.max, ro.limit)
		st.NextOffset, st.Truncated, st.Matches = g.next, g.truncated, &g.matches
		st.NextLine = &g.nextLine
		return st, err
	case ro.follow:
		return followStream(w, dir, e.ID, f, lo, ro.limit, st)
	}
	n, nl, truncated, err := copyRange(w, f, lo, hi, ro.limit, ro.hasLines, buf)
	st.NextOffset, st.Truncated = lo+n, truncated
	if firstLine > 0 && ro.hasLines {
		st.NextLine = ptr(firstLine + nl)
	}
	return st, err
}

// copyRange copies r's bytes [lo, hi) to w, at most limit of them. With
// cutLines a range longer than limit is cut after the last newline that
// fits (mid-line only when no whole line fits). It returns the bytes
// copied, the newlines among them and whether it stopped before hi.
func copyRange(w io.Writer, r io.ReaderAt, lo, hi, limit int64, cutLines bool, buf []byte) (n, newlines int64, truncated bool, err error) {
	end := hi
	if hi-lo > limit {
		end, truncated = lo+limit, true
		if cutLines {
			if p, found, err := scanBackward(r, lo, end, 1, buf); err != nil {
				return 0, 0, true, err
			} else if found == 1 {
				end = p
			}
		}
	}
	for pos := lo; pos < end; {
		k := min(int64(len(buf)), end-pos)
		got, rerr := r.ReadAt(buf[:k], pos)
		newlines += countNL(buf[:got])
		wn, werr := w.Write(buf[:got])
		n += int64(wn)
		pos += int64(got)
		switch {
		case werr != nil:
			return n, newlines, truncated, werr
		case int64(got) < k:
			if rerr == nil || errors.Is(rerr, io.EOF) {
				rerr = io.ErrUnexpectedEOF
			}
			return n, newlines, truncated, rerr
		}
	}
	return n, newlines, truncated, nil
}

func countNL(b []byte) int64 { return int64(bytes.Count(b, []byte{'\n'})) }

// grepResult is what grepRange reports.
type grepResult struct {
	next      int64 // offset after the last line searched and printed
	nextLine  int64 // line number at next (0 when unknown)
	matches   int
	truncated bool
}

// grepRange prints, as "LINE:text", the lines of r's bytes [lo, hi) that
// match re, numbering the line at lo firstLine (0: unknown, numbers are
// then relative to lo, starting at 1). It stops after max matches (0: no
// limit) or before a match that would take the output past limit bytes
// (the first match is cut to fit). A line longer than grepBlock is matched
// in grepBlock pieces, each printed with the line's number.
func grepRange(w io.Writer, r io.ReaderAt, lo, hi, firstLine int64, re *regexp.Regexp, max int, limit int64) (grepResult, error) {
	var g grepResult
	line := firstLine
	if line == 0 {
		line = 1
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, lo, hi-lo), grepBlock)
	pos, left := lo, limit
	var out []byte
	for {
		seg, err := br.ReadSlice('\n')
		if len(seg) > 0 {
			start := pos
			pos += int64(len(seg))
			complete := seg[len(seg)-1] == '\n'
			text := seg
			if complete {
				text = seg[:len(seg)-1]
			}
			if re.Match(text) {
				out = strconv.AppendInt(out[:0], line, 10)
				out = append(out, ':')
				out = append(out, text...)
				out = append(out, '\n')
				if int64(len(out)) > left {
					if g.matches == 0 {
						w.Write(out[:left])
					}
					g.next, g.truncated = start, true
					if g.matches == 0 {
						g.next = pos
					}
					g.nextLine = lineAt(firstLine, line, complete && g.matches == 0)
					return g, nil
				}
				if _, werr := w.Write(out); werr != nil {
					return g, werr
				}
				left -= int64(len(out))
				g.matches++
				if max > 0 && g.matches >= max {
					if complete {
						line++
					}
					g.next, g.truncated = pos, pos < hi
					g.nextLine = lineAt(firstLine, line, false)
					return g, nil
				}
			}
			if complete {
				line++
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			g.next = hi
			g.nextLine = lineAt(firstLine, line, false)
			return g, nil
		default:
			g.next = pos
			return g, err
		}
	}
}

// lineAt is the line number to report, 0 when the numbering is relative.
func lineAt(firstLine, line int64, past bool) int64 {
	if firstLine == 0 {
		return 0
	}
	if past {
		return line + 1
	}
	return line
}

// followStream copies the stream from lo as it grows until the capture is
// no longer running (finished or abandoned) or limit bytes were printed.
// Only committed bytes are read: the file's size when looked at.
func followStream(w *bufio.Writer, dir *store.Dir, id string, f *os.File, lo, limit int64, st readStatus) (readStatus, error) {
	buf := make([]byte, scanBlock)
	pos, left := lo, limit
	for {
		e, err := dir.Entry(id) // first the state, then the size: a finished capture's size is final
		if errors.Is(err, fs.ErrNotExist) {
			// Discarded when it ended: the open file still holds all of it.
			e, err = store.Entry{ID: id, Final: true}, nil
			st.Removed = true
		}
		if err != nil {
			return st, err
		}
		fi, err := f.Stat()
		if err != nil {
			return st, err
		}
		size := fi.Size()
		st.Size, st.Running, st.Final = size, e.Running, e.Final && !e.Running
		if size > pos && left > 0 {
			n, _, _, err := copyRange(w, f, pos, size, left, false, buf)
			pos += n
			left -= n
			st.NextOffset = pos
			if err != nil {
				return st, err
			}
			if err := w.Flush(); err != nil {
				return st, err
			}
		}
		st.NextOffset = max(pos, st.NextOffset)
		if left == 0 {
			st.Truncated = size > pos || e.Running
			return st, nil
		}
		if !e.Running {
			return st, nil
		}
		time.Sleep(followPoll)
	}
}

// Labels of --interleaved: a line's first piece, and the rest of a line
// that the other stream's chunk interrupted.
var (
	labelStart = [2]string{"stdout| ", "stderr| "}
	labelCont  = [2]string{"stdout+ ", "stderr+ "}
)

// interleaver prints chunks of both streams in arrival order, each output
// line labeled by stream, within a byte budget (labels included).
type interleaver struct {
	w        *bufio.Writer
	files    [2]*os.File
	left     int64
	midLine  int     // stream whose line is open on the output, -1 when at a line start
	lineOpen [2]bool // the stream's last byte printed was not a newline
	buf      []byte
	printed  bool
}

// chunk prints bytes [off, off+n) of stream s; it returns how many data
// bytes it printed (fewer than n when the budget ran out).
func (iv *interleaver) chunk(s int, off, n int64) (int64, error) {
	var done int64
	for done < n {
		k := min(int64(len(iv.buf)), n-done)
		got, err := iv.files[s].ReadAt(iv.buf[:k], off+done)
		if int64(got) < k {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return done, err
		}
		b := iv.buf[:k]
		for len(b) > 0 {
			i := bytes.IndexByte(b, '\n')
			piece := b
			if i >= 0 {
				piece = b[:i+1]
			}
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
				// Whole lines while they fit; cut one only when
				// nothing has been printed yet.
				if iv.printed || int64(len(pre))+1 > iv.left {
					return done, nil
				}
				piece, cut = piece[:iv.left-int64(len(pre))], true
			}
			iv.w.WriteString(pre)
			iv.w.Write(piece)
			iv.left -= int64(len(pre) + len(piece))
			iv.printed = true
			done += int64(len(piece))
			b = b[len(piece):]
			iv.lineOpen[s] = piece[len(piece)-1] != '\n'
			if iv.lineOpen[s] {
				iv.midLine = s
			} else {
				iv.midLine = -1
			}
			if cut {
				return done, nil
			}
		}
	}
	return done, nil
}

// readInterleaved prints both streams of capture e merged in the order of
// arrival recorded in its arrival index, from merged offset ro.offset, at
// most ro.limit bytes with labels. For a running capture it stops at the
// first chunk not yet committed. Bytes the index does not cover (a full
// index) follow, stream by stream, after a warning.
func readInterleaved(w *bufio.Writer, dir *store.Dir, e store.Entry, ro readOpts, d diag) (readStatus, error) {
	st := readStatus{Stream: "interleaved", Final: e.Final && !e.Running, Running: e.Running}
	iv := &interleaver{w: w, left: ro.limit, midLine: -1, buf: make([]byte, scanBlock)}
	var sizes [2]int64
	for i, name := range []string{store.Stdout, store.Stderr} {
		f, size, err := openSized(dir, e.ID, name)
		if err != nil {
			return st, err
		}
		defer f.Close()
		iv.files[i], sizes[i] = f, size
	}
	st.Size = sizes[0] + sizes[1]
	ar, err := dir.OpenArrival(e.ID)
	if err != nil {
		if errors.Is(err, store.ErrNoArrival) {
			return st, fmt.Errorf("capture %s has no arrival index (made by an older capwrap?); read each stream with --stream", e.ID)
		}
		return st, err
	}
	defer ar.Close()

	// merged is the offset in arrival order of the next byte; covered
	// the bytes of each stream the index accounts for.
	var merged int64
	var covered [2]int64
	stop := func(printedTo int64) (readStatus, error) {
		st.NextOffset, st.Truncated = printedTo, true
		return st, nil
	}
	emit := func(s int, off, n int64) (bool, error) {
		// Skip what lies before --offset.
		if merged+n <= ro.offset {
			merged += n
			return true, nil
		}
		if skip := ro.offset - merged; skip > 0 {
			off, n, merged = off+skip, n-skip, merged+skip
		}
		if !iv.printed {
			iv.lineOpen[s] = !startsLine(iv.files[s], off)
		}
		done, err := iv.chunk(s, off, n)
		merged += done
		return done == n, err
	}
	for {
		rec, err := ar.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, err
		}
		s := 0
		if rec.Stream == store.Stderr {
			s = 1
		}
		end := min(rec.Offset+rec.Length, sizes[s])
		start := min(rec.Offset, end)
		if end-start < rec.Length && e.Running {
			// Not committed yet: the order past here is not known.
			st.NextOffset = merged
			return st, nil
		}
		covered[s] = max(covered[s], end)
		ok, err := emit(s, start, end-start)
		if err != nil {
			return st, err
		}
		if !ok {
			return stop(merged)
		}
	}
	if !e.Running && (covered[0] < sizes[0] || covered[1] < sizes[1]) {
		d.warnf("the arrival index of %s ends before the output does (index full or not written); the remaining %d bytes of stdout and %d of stderr follow stream by stream",
			e.ID, sizes[0]-covered[0], sizes[1]-covered[1])
		for s := range 2 {
			if covered[s] >= sizes[s] {
				continue
			}
			ok, err := emit(s, covered[s], sizes[s]-covered[s])
			if err != nil {
				return st, err
			}
			if !ok {
				return stop(merged)
			}
		}
	}
	if iv.midLine >= 0 && iv.left > 0 {
		iv.w.WriteByte('\n') // end the last labeled line
	}
	st.NextOffset = max(merged, ro.offset)
	return st, nil
}

// startsLine reports whether offset off of f starts a line.
func startsLine(f *os.File, off int64) bool {
	if off == 0 {
		return true
	}
	var b [1]byte
	_, err := f.ReadAt(b[:], off-1)
	return err == nil && b[0] == '\n'
}
