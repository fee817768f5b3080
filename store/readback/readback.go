// Package readback reads captures back (SPEC §8 `capwrap read`): a byte
// range, a line range or the lines matching a regular expression of one
// stream, --follow of a running capture, and both streams interleaved in
// their order of arrival. It reads only through the store's files and
// knows nothing of processes, redaction or previews.
package readback

// Reads see only committed bytes: a stream file's size when it is looked
// at. Memory is a few fixed blocks whatever the file size.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/capwrap/capwrap/store"
)

// Bounds of a read.
const (
	grepBlock  = 256 << 10              // longest line a grep matches whole, bytes
	followPoll = 100 * time.Millisecond // how often a follow looks for new bytes
	readBuffer = 32 << 10               // output buffer of Read, bytes
)

// StreamInterleaved is Status.Stream of an interleaved read.
const StreamInterleaved = "interleaved"

// Query says what [store.Dir.Read] prints (SPEC §8 `capwrap read`). Offsets
// and limits are in bytes, line numbers 1-based. The zero value is not a
// query: Limit must be at least 1.
type Query struct {
	// Stream is store.Stdout or store.Stderr; ignored when Interleaved.
	Stream string
	// Offset is the byte of the stream to start at (of the merged order
	// when Interleaved). With Lines it is allowed only when the range has
	// no start (":B"): the read then goes from Offset to the end of line
	// B, as a line range's read continues once a page stopped inside a
	// line.
	Offset int64
	// Limit is the most bytes printed, at least 1. A line range longer
	// than Limit is cut after its last whole line that fits.
	Limit int64
	// Lines, when not nil, reads this line range instead of from Offset.
	Lines *LineRange
	// Grep, when not nil, prints the lines of the range that match it as
	// "LINE:text" (LINE the line number in the stream when known, else
	// counted from the start of the range).
	Grep *regexp.Regexp
	// Max stops a Grep after this many matching lines; 0: no limit but
	// Limit.
	Max int
	// Context, with Grep, prints lines around each match as grep's -B
	// and -A do: "LINE-text", with "--" between groups that do not touch
	// (see Context). Limit bounds them too.
	Context Context
	// Follow waits for new bytes of a running capture until it ends or
	// Limit bytes were printed. It excludes Grep and a Lines range with
	// an end; with Interleaved it follows both streams.
	Follow bool
	// Interleaved prints both streams merged in their order of arrival at
	// capwrap (the capture's arrival index), each line labeled "stdout| "
	// or "stderr| " ("+ " instead of "| " for the rest of a line that the
	// other stream interrupted). Labels count toward Limit. It excludes
	// Lines and Grep.
	Interleaved bool
	// FollowTimeout, with Follow, stops waiting after this long (0: not
	// before the capture ends); Status.TimedOut then says so.
	FollowTimeout time.Duration
	// Until, with Follow, stops at the first line of either stream that
	// matches it (waiting until the server says it listens, SPEC §8),
	// right after it when it is on the stream printed; Status.Matched
	// says so, and which line. A line longer than 256 KiB is matched in
	// pieces.
	Until *regexp.Regexp
	// Warnf, when not nil, is told (lowercase, no final period) that an
	// interleaved read's arrival index ends before the output does.
	Warnf func(format string, args ...any)
}

// check refuses a query that is not one (the CLI refuses these earlier,
// with its own words).
func (q Query) check() error {
	switch {
	case q.Limit < 1:
		return fmt.Errorf("read limit %d: must be at least 1 byte", q.Limit)
	case q.Offset < 0 || q.Max < 0 || q.Context.Before < 0 || q.Context.After < 0:
		return errors.New("negative read offset, maximum or context")
	case q.Context != (Context{}) && q.Grep == nil:
		return errors.New("a read takes context lines only with a grep")
	case q.Lines != nil && q.Offset != 0 && q.Lines.A != 0:
		return errors.New("a read takes an offset or a line range with a start, not both")
	case q.Follow && (q.Grep != nil || (q.Lines != nil && q.Lines.B != 0)):
		return errors.New("a followed read takes no grep or end line")
	case q.Interleaved && (q.Lines != nil || q.Grep != nil):
		return errors.New("an interleaved read takes no lines or grep")
	}
	return nil
}

// Status is what a read found, which `capwrap read` prints as the JSON
// of its last stderr line, "capwrap-read {...}" (SPEC §8; the CLI leaves
// out keys at their usual values).
type Status struct {
	// Stream is the stream read, or StreamInterleaved.
	Stream string `json:"stream"`
	// NextOffset is the byte offset to continue at with Query.Offset
	// (of the merged order when interleaved, labels not counted).
	NextOffset int64 `json:"next_offset"`
	// Size is the stream's committed bytes when it was read (both streams'
	// when interleaved).
	Size int64 `json:"size"`
	// Final says the capture is finished: the stream will never change.
	Final bool `json:"final"`
	// Running says the capture's writer still runs. Neither Final nor
	// Running: the capture was abandoned.
	Running bool `json:"running"`
	// Truncated says the output stopped (at Limit or Max) before the end
	// of what was asked.
	Truncated bool `json:"truncated"`
	// NextLine is the line number at NextOffset, when a line or grep read
	// knows it.
	NextLine *int64 `json:"next_line,omitempty"`
	// MidLine says a truncated read stopped inside a line (none of it
	// fitted whole, or a grep's window inside a long line): the next read
	// continues at NextOffset, not at a line (NextLine is then absent
	// for a line read).
	MidLine bool `json:"mid_line,omitempty"`
	// Matches is the number of lines a grep printed.
	Matches *int `json:"matches,omitempty"`
	// Removed says the capture ended and was not kept (--keep auto on a
	// compact success, --keep never) while Follow read it.
	Removed bool `json:"removed,omitempty"`
	// Matched says a Follow ended at a line matching Until; TimedOut that
	// it ended at FollowTimeout, the capture still running.
	Matched  bool `json:"matched,omitempty"`
	TimedOut bool `json:"timed_out,omitempty"`
	// MatchStream and MatchLine, when Matched, are the stream whose line
	// matched and the start of that line (at most 1 KiB, newline
	// excluded): it may be on the stream not printed.
	MatchStream string `json:"-"`
	MatchLine   string `json:"-"`
}

// Read prints to w what q asks of capture e (an entry of d, see [store.Dir.Entry])
// and says what it found (SPEC §8). It buffers its output and flushes it
// before it returns, and with Follow after each batch of new bytes. The
// error is a refused query, an error opening or reading a file of the
// capture (fs.ErrNotExist when a stream file is missing, one wrapping
// [store.ErrNoArrival] for an interleaved read of a capture without an arrival
// index) or w's write error; the status is then incomplete.
func Read(w io.Writer, d *store.Dir, e store.Entry, q Query) (Status, error) {
	if err := q.check(); err != nil {
		return Status{}, err
	}
	bw := bufio.NewWriterSize(w, readBuffer)
	var st Status
	var err error
	switch {
	case q.Interleaved && q.Follow:
		st, err = followInterleaved(d, bw, e, q)
	case q.Interleaved:
		st, err = readInterleaved(d, bw, e, q)
	default:
		st, err = readStream(d, bw, e, q)
	}
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	return st, err
}

// openSized opens a stream file of capture id and returns its size in
// bytes now: what a read of a running capture may return (committed bytes).
func openSized(d *store.Dir, id, stream string) (*os.File, int64, error) {
	f, _, err := d.OpenStream(id, stream)
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

// readStream reads one stream of capture e as q says: a byte range, a
// line range (whole lines while they fit in q.Limit), grep matches or a
// follow.
func readStream(d *store.Dir, w *bufio.Writer, e store.Entry, q Query) (Status, error) {
	st := Status{Stream: q.Stream, Final: e.Final && !e.Running, Running: e.Running}
	f, size, err := openSized(d, e.ID, q.Stream)
	if err != nil {
		return st, err
	}
	defer f.Close()
	st.Size = size
	buf := make([]byte, scanBlock)

	lo, hi := q.Offset, max(size, q.Offset)
	if q.Lines != nil {
		if lo, hi, err = q.Lines.resolve(f, size, buf); err != nil {
			return st, err
		}
		if q.Offset > 0 { // ":B" from an offset
			lo = min(q.Offset, max(hi, lo))
			hi = max(hi, lo)
		}
	}
	var firstLine int64 // line number of lo, 0 when not computed
	switch {
	case q.Lines != nil && q.Lines.A > 0:
		firstLine = q.Lines.A
	case lo == 0:
		firstLine = 1
	case q.Grep != nil:
		n, err := countLines(f, lo, buf)
		if err != nil {
			return st, err
		}
		firstLine = n + 1
	}

	switch {
	case q.Grep != nil:
		g, err := grepRange(w, f, lo, hi, firstLine, q.Grep, q.Max, q.Limit, q.Context)
		st.NextOffset, st.Truncated, st.Matches, st.MidLine = g.next, g.truncated, &g.matches, g.midLine
		st.NextLine = &g.nextLine
		return st, err
	case q.Follow:
		return follow(d, w, e.ID, f, lo, q, st)
	}
	n, nl, truncated, err := copyRange(w, f, lo, hi, q.Limit, buf)
	st.NextOffset, st.Truncated = lo+n, truncated
	if truncated && err == nil {
		if st.MidLine, err = midLine(f, lo+n); err != nil {
			return st, err
		}
	}
	if firstLine > 0 && q.Lines != nil && !st.MidLine {
		nextLine := firstLine + nl
		st.NextLine = &nextLine
	}
	return st, err
}

// midLine reports whether off, a read's end, is inside a line of r: the
// byte before it is not a newline (and it is not r's start).
func midLine(r io.ReaderAt, off int64) (bool, error) {
	if off == 0 {
		return false, nil
	}
	var b [1]byte
	if err := readBlock(r, b[:], off-1); err != nil {
		return false, err
	}
	return b[0] != '\n', nil
}

// copyRange copies r's bytes [lo, hi) to w, at most limit of them. A range
// longer than limit is cut after the last newline that fits, or, when no
// whole line fits, at the last UTF-8 code-point boundary that does (never
// inside a character: SPEC §8), so the next read starts where this one
// stopped with nothing cut in two. It returns the bytes copied, the
// newlines among them and whether it stopped before hi. buf is the block
// buffer; r shorter than hi is io.ErrUnexpectedEOF.
func copyRange(w io.Writer, r io.ReaderAt, lo, hi, limit int64, buf []byte) (n, newlines int64, truncated bool, err error) {
	end := hi
	if hi-lo > limit {
		end, truncated = lo+limit, true
		p, found, err := scanBackward(r, lo, end, 1, buf)
		switch {
		case err != nil:
			return 0, 0, true, err
		case found == 1:
			end = p
		default:
			if end, err = runeStart(r, lo, end); err != nil {
				return 0, 0, true, err
			}
		}
	}
	for pos := lo; pos < end; {
		k := min(int64(len(buf)), end-pos)
		got, rerr := r.ReadAt(buf[:k], pos)
		newlines += int64(bytes.Count(buf[:got], []byte{'\n'}))
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

// runeStart returns where the UTF-8 character that byte end of r falls
// inside starts, when that is after lo; else end. A cut there leaves every
// character whole on one side. Invalid UTF-8 (a stray continuation byte)
// is cut where it is.
func runeStart(r io.ReaderAt, lo, end int64) (int64, error) {
	from := max(lo, end-(utf8.UTFMax-1)) // bytes [from, end], end's own when r has it
	var b [utf8.UTFMax]byte
	k, err := r.ReadAt(b[:end+1-from], from)
	if int64(k) < end-from {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return end, err
	}
	if int64(k) == end-from || utf8.RuneStart(b[end-from]) {
		return end, nil // r ends there, or a character starts there
	}
	for i := end - 1; i >= from; i-- {
		c := b[i-from]
		if !utf8.RuneStart(c) {
			continue
		}
		width := int64(0) // of the sequence c leads
		switch {
		case c >= 0xF0:
			width = 4
		case c >= 0xE0:
			width = 3
		case c >= 0xC0:
			width = 2
		}
		if i+width > end && i > lo {
			return i, nil
		}
		return end, nil
	}
	return end, nil
}

// grepResult is what grepRange reports.
type grepResult struct {
	next      int64 // offset after the last line searched and printed
	nextLine  int64 // line number at next (0 when unknown)
	matches   int
	truncated bool
	midLine   bool // next is inside a line
}

// Context is how many lines a grep prints around each match, as
// grep's -B and -A: context lines read "LINE-text", and groups of lines
// that do not touch are separated by a line "--".
type Context struct {
	Before, After int
}

// grepper is the state of one grepRange.
type grepper struct {
	w          io.Writer
	r          io.ReaderAt
	re         *regexp.Regexp
	maxMatches int
	ctx        Context
	left       int64 // output budget, bytes
	firstLine  int64 // as grepRange's
	line       int64 // number of the line being searched
	cont       bool  // the segment being searched continues a line (a piece after the first, or the range began inside the line)
	out        []byte
	res        grepResult

	// Context (ctx not zero).
	startLine   int64   // the number of the line at lo
	starts      []int64 // starts[l%len(starts)]: where line l begins, for the last ctx.Before+1 lines
	printed     bool    // a line was printed
	printedEnd  int64   // where the last line printed ends
	printedLine int64   // the number of the line at printedEnd
	afterUntil  int64   // the last line of the current after-context (0: none)
	draining    bool    // maxMatches reached: only the after-context is left
	buf         []byte  // to read a before-context back, grepBlock bytes
}

// grepRange prints, as "LINE:text", the lines of r's bytes [lo, hi) that
// match re, numbering the line at lo firstLine (0: unknown, numbers are
// then relative to lo, starting at 1). It stops after maxMatches matches
// (0: no limit) or before a match that would take the output past limit
// bytes (the first match is cut to fit). A line longer than grepBlock is
// matched in grepBlock pieces, each printed with the line's number.
//
// With ctx, each match comes with up to ctx.Before lines before it and
// ctx.After lines after it, printed as "LINE-text" (not searched for
// once maxMatches is reached), groups that overlap or touch merged, and
// "--" between the others. A group that does not fit in limit whole is
// left for the next read (next is where it starts), except the first:
// that one is printed without its before-context. The before-context is
// read back from r when a match needs it: memory is 8 bytes per line of
// ctx.Before.
func grepRange(w io.Writer, r io.ReaderAt, lo, hi, firstLine int64, re *regexp.Regexp, maxMatches int, limit int64, ctx Context) (grepResult, error) {
	g := grepper{w: w, r: r, re: re, maxMatches: maxMatches, ctx: ctx, left: limit, firstLine: firstLine, line: max(firstLine, 1)}
	g.startLine, g.printedEnd, g.printedLine = g.line, lo, g.line
	var err error
	if g.cont, err = midLine(r, lo); err != nil {
		return g.res, err
	}
	if ctx.Before > 0 {
		g.starts = make([]int64, ctx.Before+1)
		g.starts[g.line%int64(len(g.starts))] = lo
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, lo, hi-lo), grepBlock)
	pos := lo
	for {
		seg, err := br.ReadSlice('\n')
		if len(seg) > 0 {
			start := pos
			pos += int64(len(seg))
			if done, werr := g.segment(seg, start, pos, hi); done || werr != nil {
				return g.res, werr
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			g.res.next = hi
			g.res.nextLine = lineAt(firstLine, g.line, false)
			return g.res, nil
		default:
			g.res.next = pos
			return g.res, err
		}
	}
}

// segment searches seg, bytes [start, end) of the range that ends at hi:
// a whole line with its newline, or a grepBlock piece of a longer one. It
// prints seg when it matches or is after-context; done says the search
// stops here.
func (g *grepper) segment(seg []byte, start, end, hi int64) (done bool, err error) {
	complete := seg[len(seg)-1] == '\n'
	defer func() { g.cont = !complete }()
	text := seg
	if complete {
		text = seg[:len(seg)-1]
	}
	switch {
	case !g.draining && g.re.Match(text):
		if done, err := g.match(text, start, end, hi, complete); done || err != nil {
			return true, err
		}
	case g.afterUntil > 0 && g.line <= g.afterUntil:
		if fits, err := g.emit('-', g.line, text, end, complete); err != nil || !fits {
			g.res.next, g.res.truncated = start, true
			g.res.nextLine = lineAt(g.firstLine, g.line, false)
			return true, err
		}
	case g.draining:
		g.res.next, g.res.truncated = start, true
		g.res.nextLine = lineAt(g.firstLine, g.line, false)
		return true, nil
	}
	if complete {
		g.line++
		if g.starts != nil {
			g.starts[g.line%int64(len(g.starts))] = end
		}
	}
	return false, nil
}

// match prints the matching segment text, bytes [start, end), with its
// before-context, or says where the next read starts. A segment longer
// than grepLongLine is printed as windows around its matches instead.
func (g *grepper) match(text []byte, start, end, hi int64, complete bool) (done bool, err error) {
	if len(text) > grepLongLine || g.cont {
		return g.windows(text, start, end, hi, complete)
	}
	// The before-context: the lines since the last one printed, at most
	// ctx.Before of them (and the pieces of this line before this one).
	cs, csLine := start, g.line
	if g.ctx.Before > 0 {
		l := max(g.line-int64(g.ctx.Before), g.startLine)
		cs, csLine = g.starts[l%int64(len(g.starts))], l
		if cs < g.printedEnd {
			cs, csLine = g.printedEnd, g.printedLine
		}
	}
	sep := g.printed && cs > g.printedEnd && (g.ctx.Before > 0 || g.ctx.After > 0)
	need := lineSize(g.line, text)
	if sep {
		need += int64(len(groupSeparator))
	}
	if cs < start && need <= g.left {
		n, err := g.context(cs, start, csLine, g.left-need, false)
		if err != nil {
			return true, err
		}
		need += n
	}
	if need > g.left {
		if g.res.matches > 0 {
			g.res.next, g.res.truncated = cs, true
			g.res.nextLine = lineAt(g.firstLine, csLine, false)
			return true, nil
		}
		// The first match: without its context, cut to fit if it alone
		// is too long.
		sep, cs = false, start
		if size := lineSize(g.line, text); size > g.left {
			g.out = appendLine(g.out[:0], g.line, ':', text)
			g.w.Write(g.out[:g.left]) // a write error comes back from the flush
			g.res.next, g.res.truncated = end, true
			g.res.nextLine = lineAt(g.firstLine, g.line, complete)
			return true, nil
		}
	}
	if sep {
		if _, err := io.WriteString(g.w, groupSeparator); err != nil {
			return true, err
		}
		g.left -= int64(len(groupSeparator))
	}
	if cs < start {
		if _, err := g.context(cs, start, csLine, g.left, true); err != nil {
			return true, err
		}
	}
	if _, err := g.emit(':', g.line, text, end, complete); err != nil {
		return true, err
	}
	g.res.matches++
	return g.afterMatch(end, hi, complete), nil
}

// afterMatch follows the printing of the current line's matches (the
// segment ends at end): their after-context begins, and at maxMatches the
// search stops, or, with an after-context, only that is left to print.
// done says the grep ends here.
func (g *grepper) afterMatch(end, hi int64, complete bool) (done bool) {
	if g.ctx.After > 0 {
		g.afterUntil = g.line + int64(g.ctx.After)
	}
	if g.maxMatches == 0 || g.res.matches < g.maxMatches {
		return false
	}
	if g.ctx.After > 0 {
		g.draining = true // the after-context still
		return false
	}
	if complete {
		g.line++
	}
	g.res.next, g.res.truncated = end, end < hi
	g.res.nextLine = lineAt(g.firstLine, g.line, false)
	return true
}

// Windows of a grep inside a long line (SPEC §8: a window around each
// match, also inside a line of any length).
const (
	grepLongLine = 1000 // a matching line longer than this, bytes, is printed as windows
	grepWindow   = 120  // bytes of the line each side of a match, at most
	grepMatchMax = 200  // bytes of one match printed, at most
)

// windows prints each match in text, the long segment [start, end), as
// "LINE@OFFSET:…before MATCH after…": its line number, the stream offset of
// the match, and up to grepWindow bytes each side (whole characters; "…"
// where the line goes on). Each window counts as a match; a match inside
// the window before it is not printed again. It stops at maxMatches or
// before a window that does not fit; the next read then starts at that
// match (mid-line). Context lines are not printed around windows: the
// window is the context. A line longer than grepBlock is searched a piece
// at a time: a window does not reach into the piece before, and a match
// across two pieces is not found.
func (g *grepper) windows(text []byte, start, end, hi int64, complete bool) (done bool, err error) {
	shown := -1 // the end of the last window printed: a match before it is in it
	for _, m := range g.findIn(text, start, end, hi, complete) {
		if m[0] < shown {
			continue
		}
		if g.maxMatches > 0 && g.res.matches >= g.maxMatches {
			g.stopAt(start+int64(m[0]), true)
			return true, nil
		}
		m1 := min(m[1], m[0]+grepMatchMax)
		a, b := max(0, m[0]-grepWindow), min(len(text), m1+grepWindow)
		for a < m[0] && !utf8.RuneStart(text[a]) {
			a++
		}
		for b < len(text) && b > m1 && !utf8.RuneStart(text[b]) {
			b--
		}
		g.out = strconv.AppendInt(g.out[:0], g.line, 10)
		g.out = append(g.out, '@')
		g.out = strconv.AppendInt(g.out, start+int64(m[0]), 10)
		g.out = append(g.out, ':')
		if a > 0 || g.cont {
			g.out = append(g.out, "…"...)
		}
		g.out = append(g.out, text[a:b]...)
		if b < len(text) || !complete && end < hi {
			g.out = append(g.out, "…"...)
		}
		g.out = append(g.out, '\n')
		if int64(len(g.out)) > g.left {
			g.stopAt(start+int64(m[0]), true)
			return true, nil
		}
		if _, err := g.w.Write(g.out); err != nil {
			return true, err
		}
		g.left -= int64(len(g.out))
		g.res.matches++
		shown = b
	}
	if shown < 0 {
		return false, nil // only matches at the piece's edges, which are none
	}
	g.printed, g.printedEnd, g.printedLine = true, end, g.line
	if complete {
		g.printedLine++
	}
	return g.afterMatch(end, hi, complete), nil
}

// findIn returns the matches in text, the segment [start, end): when it is
// a piece of a longer line, the regular expression sees the byte before it
// and the one after it too, so that ^, $ and \b do not match at a piece's
// edges as if the line began or ended there. A match that begins in those
// bytes is left out, and one that ends in the next is cut at the piece's
// end.
func (g *grepper) findIn(text []byte, start, end, hi int64, complete bool) [][]int {
	var prev, next [1]byte
	lead, trail := 0, 0
	if g.cont && start > 0 && readBlock(g.r, prev[:], start-1) == nil {
		lead = 1
	}
	if !complete && end < hi && readBlock(g.r, next[:], end) == nil {
		trail = 1
	}
	if lead == 0 && trail == 0 {
		return g.re.FindAllIndex(text, -1)
	}
	ext := make([]byte, 0, lead+len(text)+trail)
	ext = append(append(append(ext, prev[:lead]...), text...), next[:trail]...)
	var out [][]int
	for _, m := range g.re.FindAllIndex(ext, -1) {
		if m[0] < lead || m[0] >= lead+len(text) {
			continue
		}
		out = append(out, []int{m[0] - lead, min(m[1], lead+len(text)) - lead})
	}
	return out
}

// stopAt ends the grep before stream offset next, inside the current
// line when midLine.
func (g *grepper) stopAt(next int64, midLine bool) {
	g.res.next, g.res.truncated, g.res.midLine = next, true, midLine
	g.res.nextLine = lineAt(g.firstLine, g.line, false)
}

// groupSeparator is printed between groups of lines that do not touch.
const groupSeparator = "--\n"

// context reads r's bytes [a, b) back, lines (or grepBlock pieces) from
// line number line on, and prints them as context, or with print false
// only counts the bytes that would take, stopping once past most. The
// caller has checked that printed they fit.
func (g *grepper) context(a, b, line int64, most int64, print bool) (int64, error) {
	if g.buf == nil {
		g.buf = make([]byte, grepBlock)
	}
	var n int64
	for pos := a; pos < b && n <= most; {
		k := min(int64(len(g.buf)), b-pos)
		if err := readBlock(g.r, g.buf[:k], pos); err != nil {
			return n, err
		}
		seg := g.buf[:k]
		if i := bytes.IndexByte(seg, '\n'); i >= 0 {
			seg = seg[:i+1]
		}
		pos += int64(len(seg))
		complete := seg[len(seg)-1] == '\n'
		text := seg
		if complete {
			text = seg[:len(seg)-1]
		}
		n += lineSize(line, text)
		if print {
			if _, err := g.emit('-', line, text, pos, complete); err != nil {
				return n, err
			}
		}
		if complete {
			line++
		}
	}
	return n, nil
}

// emit prints text, line number line, as "LINE:text" (kind ':') or
// "LINE-text" (kind '-'), when it fits in what is left of the output;
// end is where its bytes end in r.
func (g *grepper) emit(kind byte, line int64, text []byte, end int64, complete bool) (fits bool, err error) {
	g.out = appendLine(g.out[:0], line, kind, text)
	if int64(len(g.out)) > g.left {
		return false, nil
	}
	if _, err := g.w.Write(g.out); err != nil {
		return false, err
	}
	g.left -= int64(len(g.out))
	g.printed, g.printedEnd, g.printedLine = true, end, line
	if complete {
		g.printedLine++
	}
	return true, nil
}

// appendLine appends "LINE" kind "text\n" to b.
func appendLine(b []byte, line int64, kind byte, text []byte) []byte {
	b = strconv.AppendInt(b, line, 10)
	b = append(b, kind)
	b = append(b, text...)
	return append(b, '\n')
}

// lineSize is the length of appendLine's line, in bytes.
func lineSize(line int64, text []byte) int64 {
	digits := int64(1)
	for n := line; n >= 10; n /= 10 {
		digits++
	}
	return digits + 1 + int64(len(text)) + 1
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

// follow copies stream file f of capture id from lo as it grows until the
// capture is no longer running (finished or abandoned) or limit bytes were
// printed. Only committed bytes are read: the file's size when looked at.
// With q.Until it also stops at the first matching line of either stream
// (SPEC §8: many servers say "listening on" on stderr): the followed
// stream's as it is printed, the other's from where it stood when byte lo
// of the followed stream arrived.
func follow(d *store.Dir, w *bufio.Writer, id string, f *os.File, lo int64, q Query, st Status) (Status, error) {
	buf := make([]byte, scanBlock)
	pos, left := lo, q.Limit
	var deadline time.Time
	if q.FollowTimeout > 0 {
		deadline = time.Now().Add(q.FollowTimeout)
	}
	var until *lineMatcher
	var other *otherStream
	if q.Until != nil {
		until = &lineMatcher{re: q.Until}
		o, err := watchOther(d, id, q.Stream, lo, q.Until)
		if err != nil {
			return st, err
		}
		if o != nil {
			defer o.f.Close()
			other = o
		}
	}
	for {
		e, err := d.Entry(id) // first the state, then the size: a finished capture's size is final
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
			end := size
			if until != nil {
				if end, st.Matched, err = until.scan(f, pos, min(size, pos+left), buf); err != nil {
					return st, err
				}
				if st.Matched {
					st.MatchStream, st.MatchLine = q.Stream, string(until.hit)
				}
			}
			n, _, truncated, err := copyRange(w, f, pos, end, left, buf)
			pos += n
			left -= n
			st.NextOffset = pos
			if err != nil {
				return st, err
			}
			if err := w.Flush(); err != nil {
				return st, err
			}
			if truncated { // cut on a line or character boundary before limit
				st.Truncated = true
				st.MidLine, err = midLine(f, pos)
				return st, err
			}
		}
		if other != nil && !st.Matched {
			if st.Matched, err = other.scan(buf); err != nil {
				return st, err
			}
			if st.Matched {
				st.MatchStream, st.MatchLine = other.name, string(other.m.hit)
			}
		}
		st.NextOffset = max(pos, st.NextOffset)
		switch {
		case st.Matched:
			return st, nil
		case left == 0:
			st.Truncated = size > pos || e.Running
			return st, nil
		case !e.Running:
			return st, nil
		case !deadline.IsZero() && time.Now().After(deadline):
			st.TimedOut = true
			return st, nil
		}
		time.Sleep(followPoll)
	}
}

// otherStream watches the stream a follow does not print for a line
// matching --until.
type otherStream struct {
	name string
	f    *os.File
	pos  int64 // the next byte to scan
	m    lineMatcher
}

// watchOther opens the stream of capture id that is not stream, to be
// scanned for re from the bytes that arrived after byte lo of stream (its
// arrival index says which; without one, from its start when lo is 0,
// else from its end now). It returns nil when that stream has no file.
func watchOther(d *store.Dir, id, stream string, lo int64, re *regexp.Regexp) (*otherStream, error) {
	name := store.Stderr
	if stream == store.Stderr {
		name = store.Stdout
	}
	f, size, err := openSized(d, id, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	o := &otherStream{name: name, f: f, m: lineMatcher{re: re}}
	if lo > 0 {
		if o.pos, err = arrivedBefore(d, id, stream, lo); err != nil {
			o.pos = size
		}
		o.pos = min(o.pos, size)
	}
	return o, nil
}

// scan reads the other stream's new committed bytes for a matching line.
func (o *otherStream) scan(buf []byte) (bool, error) {
	fi, err := o.f.Stat()
	if err != nil || fi.Size() <= o.pos {
		return false, err
	}
	end, hit, err := o.m.scan(o.f, o.pos, fi.Size(), buf)
	o.pos = end
	return hit, err
}

// lineMatcher finds the first line matching re in a stream read piece by
// piece, carrying a partial line over (at most grepBlock bytes of it).
type lineMatcher struct {
	re    *regexp.Regexp
	carry []byte
	// hit is the start of the line that matched (at most matchKept
	// bytes of it, newline excluded).
	hit []byte
}

// matchKept is the most bytes of a matching line kept for Status.MatchLine.
const matchKept = 1024

// scan reads r's bytes [lo, hi) and returns where to stop printing: just
// after the first line (or grepBlock piece) that matches, with matched
// true, else hi. A last partial line is carried over to the next scan.
func (m *lineMatcher) scan(r io.ReaderAt, lo, hi int64, buf []byte) (int64, bool, error) {
	for pos := lo; pos < hi; {
		k := min(int64(len(buf)), hi-pos)
		if err := readBlock(r, buf[:k], pos); err != nil {
			return pos, false, err
		}
		for b := buf[:k]; len(b) > 0; {
			piece := b
			if i := bytes.IndexByte(b, '\n'); i >= 0 {
				piece = b[:i+1]
			}
			b = b[len(piece):]
			pos += int64(len(piece))
			if m.feed(piece) {
				return pos, true, nil
			}
		}
	}
	return hi, false, nil
}

// feed takes piece, bytes of at most one line (a newline only at its
// end), and reports whether it completed a line, or a piece of grepBlock
// bytes of a longer one, that matches.
func (m *lineMatcher) feed(piece []byte) bool {
	done := len(piece) > 0 && piece[len(piece)-1] == '\n'
	if done {
		piece = piece[:len(piece)-1]
	}
	m.carry = append(m.carry, piece...)
	if !done && len(m.carry) < grepBlock {
		return false
	}
	hit := m.re.Match(m.carry)
	if hit {
		m.hit = append([]byte(nil), m.carry[:min(len(m.carry), matchKept)]...)
	}
	m.carry = m.carry[:0]
	return hit
}
