//go:build unix

package main

// `capwrap read` (SPEC §8): the flags, their usage errors, the hints and
// the status line; the reading itself is store's [store.Dir.Read]: bounded
// reads of one stream of a capture by byte range, line range or regular
// expression, --follow of a running capture, and --interleaved, both
// streams in their order of arrival at capwrap. Whatever the mode, stdout
// gets at most --limit bytes and stderr ends with one machine-readable
// line:
//
//	capwrap-read {"next_offset":9000,"size":1288895,"truncated":true,"next_line":151}
//
// next_offset is where to continue with --offset; size the stream's
// committed bytes when it was read; final whether the capture is finished
// (the stream will never change); running whether its writer still runs
// (neither: abandoned); truncated whether the output stopped (at --limit
// or --max) before the end of what was asked. Keys at their usual values
// are left out (issue 24): stream stdout, final true, running and
// truncated false. next_line (line modes, when known) and matches
// (--grep) are added when they apply. For --interleaved, stream is
// "interleaved" and offsets count the bytes of both streams in arrival
// order (labels not included).
//
// With --new the read starts at its consumer's cursor instead of
// --offset and moves that cursor to next_offset (SPEC §8); the status
// line adds "cursor" (left out for store.DefaultCursor) and
// "nothing_new":true when there was nothing to print.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/store/readback"
)

const (
	// readDefaultLimit is --limit's default, bytes: with the hint and the
	// status line on stderr, a default read fits the preview's
	// 10,000-character view (SPEC §8), which a harness shows whole. The
	// preview's markers count on it.
	readDefaultLimit = runner.ReadPage
	// readFollowLimit is --limit's default with --follow, bytes: a follow
	// waits for a line (--until) that may come after more than a page.
	readFollowLimit  = 64 << 10
	readStatusPrefix = "capwrap-read "
	maxGrepContext   = 10000 // -A, -B, -C: lines (8 bytes of memory each for -B)
)

// readOptions are the flags of `capwrap read`: those of the query as they
// are (q), and the ones query checks and converts.
type readOptions struct {
	q                  readback.Query
	offset, limit      size
	lines, grep, until string
	context            int
	// newOnly and cursor are --new and --cursor: read from consumer
	// cursor's position on, and move it (SPEC §8).
	newOnly bool
	cursor  string
	// flags is the flag set that filled the options: which flags were
	// given.
	flags *pflag.FlagSet
}

func (o *readOptions) addFlags(fs *pflag.FlagSet) {
	o.flags = fs
	o.limit = readDefaultLimit
	fs.StringVarP(&o.q.Stream, "stream", "s", "stdout", "the stream to read: stdout or stderr")
	fs.Var(&o.offset, "offset", "start at this byte offset (bytes, or 64K, 1M...)")
	fs.Var(&o.limit, "limit", "print at most this many bytes (with --follow: 64K)")
	fs.StringVarP(&o.lines, "lines", "n", "", "lines A:B, 1-based, inclusive; negative counts from the end (-50: is the last 50)")
	fs.StringVarP(&o.grep, "grep", "e", "", "print the lines matching this regular expression, with line numbers")
	fs.IntVar(&o.q.Max, "max", 0, "with --grep: stop after this many matching lines (0: no limit but --limit)")
	fs.IntVarP(&o.context, "context", "C", 0, "with --grep: print this many lines before and after each match")
	fs.IntVarP(&o.q.Context.After, "after-context", "A", 0, "with --grep: print this many lines after each match")
	fs.IntVarP(&o.q.Context.Before, "before-context", "B", 0, "with --grep: print this many lines before each match")
	fs.BoolVarP(&o.q.Follow, "follow", "f", false, "wait for new bytes of a running capture until it ends")
	fs.Var(durationVar(&o.q.FollowTimeout, 0), "timeout", "with --follow: stop waiting after this long (0: when the capture ends)")
	fs.StringVar(&o.until, "until", "", "with --follow: stop after the first line matching this regular expression")
	fs.BoolVar(&o.q.Interleaved, "interleaved", false, "stdout and stderr merged in their order of arrival at capwrap")
	fs.BoolVar(&o.newOnly, "new", false, "what this consumer has not read yet (from its cursor), then move its cursor")
	fs.StringVar(&o.cursor, "cursor", store.DefaultCursor, "with --new: the consumer's name, 1 to 64 of A-Z a-z 0-9 . _ -")
}

func newReadCommand() command {
	var o readOptions
	return command{nargs: 1, addFlags: o.addFlags,
		run: func(e *env, args []string) error { return runRead(e, o, args) }}
}

// runRead is `capwrap read ID [flags]` (SPEC §8): the query's bytes on
// stdout, hints and the status line on stderr. A --follow --until that saw
// no match exits 1, as grep does.
func runRead(e *env, o readOptions, args []string) error {
	q, err := o.query()
	if err != nil {
		return usageError{"read: " + err.Error(), fmt.Sprintf("usage: %s (capwrap help read)", synopsis("read"))}
	}
	dir, c, err := openCapture(e, args[0])
	if err != nil {
		return err
	}
	defer dir.Close()
	q.Warnf = e.d.Warnf
	if o.newOnly {
		return readNew(e, o, q, dir, c.ID)
	}
	status, err := read(e.stdout, dir, c, q)
	if err != nil {
		return err
	}
	if !status.Final && !status.Running && !c.KilledWithCapwrap {
		// Abandoned now, perhaps not when opened (--follow): the
		// watchdog's note, if any, is there by now.
		if now, err := dir.Entry(c.ID); err == nil {
			c = now
		}
	}
	readHints(c, q, status, e.d)
	if q.Until != nil && !status.Matched && !status.Running && !status.Truncated {
		untilMissed(e, dir, c.ID, q)
	}
	if status.Truncated {
		e.d.Hintf("more follows: continue with `%s`", o.continuation(e.global.dir, c.ID, q, status))
	}
	fmt.Fprintf(e.stderr, "%s%s\n", readStatusPrefix, statusLine(status, newStatus{}))
	if q.Until != nil && !status.Matched {
		return exitWith(exitFailure, 0) // as grep when nothing matched
	}
	return nil
}

// read is readback.Read with its errors as the verb says them.
func read(w io.Writer, dir *store.Dir, c store.Entry, q readback.Query) (readback.Status, error) {
	status, err := readback.Read(w, dir, c, q)
	if errors.Is(err, store.ErrNoArrival) {
		err = fmt.Errorf("capture %s has no arrival index (made by an older capwrap?); read each stream with --stream", c.ID)
	}
	if err != nil {
		return status, failure{msg: fmt.Sprintf("read %s: %v", c.ID, store.UnwrapPath(err))}
	}
	return status, nil
}

// readNew is `capwrap read ID --new [--cursor NAME]` (SPEC §8): what
// consumer o.cursor has not read yet of the stream q names (of both
// streams, in their order of arrival, with --interleaved), bounded by
// q.Limit as any read, then that consumer's cursor moved to where the
// output stopped; no other cursor moves. The cursor's lock is held from
// reading the cursor to moving it, so reads of one cursor at once
// print each byte once between them. Output that could not be written
// leaves the cursor where it was; a cursor that could not be moved
// after printing is a failure that says the next --new repeats it.
func readNew(e *env, o readOptions, q readback.Query, dir *store.Dir, id string) error {
	stream := q.Stream
	if q.Interleaved {
		stream = store.CursorInterleaved
	}
	cur, err := dir.LockCursor(id, o.cursor, stream)
	if err != nil {
		return failure{msg: fmt.Sprintf("read %s: cursor %s: %v", id, o.cursor, store.UnwrapPath(err))}
	}
	defer cur.Close()
	if q.Offset, err = cur.Offset(); err != nil {
		return failure{msg: fmt.Sprintf("read %s: cursor %s: %v", id, o.cursor, store.UnwrapPath(err))}
	}
	c, err := dir.Entry(id) // its state now, after any wait for the lock
	if err != nil {
		return failure{msg: fmt.Sprintf("cannot read capture %s: %v", id, store.UnwrapPath(err))}
	}
	status, err := read(e.stdout, dir, c, q)
	if err != nil {
		return err
	}
	if status.NextOffset != q.Offset {
		if err := cur.Set(status.NextOffset); err != nil {
			return failure{msg: fmt.Sprintf("read %s: cursor %s was not moved past what was printed (the next --new prints it again): %v", id, o.cursor, store.UnwrapPath(err))}
		}
	}
	// Nothing new: nothing printed and nothing left (a --limit below an
	// interleaved label prints nothing either, but is truncated).
	nothing := status.NextOffset == q.Offset && !status.Truncated
	newHints(id, o.cursor, q, status, nothing, e.d)
	if status.Truncated {
		e.d.Hintf("more follows: continue with `%s`", o.newContinuation(e.global.dir, id, q))
	}
	fmt.Fprintf(e.stderr, "%s%s\n", readStatusPrefix, statusLine(status, newStatus{cursor: o.cursor, nothing: nothing}))
	return nil
}

// newHints says what a --new read of capture id by cursor found: nothing
// new (and whether more may come), more to come from a running capture,
// an abandoned capture (readNew adds how to continue a truncated read).
func newHints(id, cursor string, q readback.Query, st readback.Status, nothing bool, d diag) {
	what := q.Stream
	if q.Interleaved {
		what = "stdout or stderr"
	}
	switch {
	case !st.Final && !st.Running:
		d.Warnf("capture %s was abandoned (capwrap ended without a receipt): the stream holds what was committed", id)
	case st.Truncated:
	case nothing && st.Running:
		d.Hintf("nothing new on %s of capture %s for cursor %s; it still runs", what, id, cursor)
	case nothing:
		d.Hintf("nothing new on %s of capture %s for cursor %s: it has ended and this cursor read all of it", what, id, cursor)
	case st.Running:
		d.Hintf("capture %s is still running: read --new again for what it commits next", id)
	}
}

// newContinuation is the command that reads on from where a truncated
// --new read stopped: the same read again, as the cursor moved.
func (o *readOptions) newContinuation(dirFlag, id string, q readback.Query) string {
	args := []string{"capwrap"}
	if dirFlag != "" {
		args = append(args, "--dir", text.ShellQuote(dirFlag))
	}
	args = append(args, "read", id, "--new")
	if o.cursor != store.DefaultCursor {
		args = append(args, "--cursor", o.cursor)
	}
	switch {
	case q.Interleaved:
		args = append(args, "--interleaved")
	case q.Stream != store.Stdout:
		args = append(args, "--stream", q.Stream)
	}
	if o.flags.Changed("limit") {
		args = append(args, "--limit", strconv.FormatInt(q.Limit, 10))
	}
	return strings.Join(args, " ")
}

// newStatus is what the status line of a --new read adds: the cursor
// (left out when store.DefaultCursor or not a --new read) and whether
// there was nothing new.
type newStatus struct {
	cursor  string
	nothing bool
}

// statusLine is the JSON of the read's status line with the keys at their
// usual values left out (issue 24: a reader pays for every character):
// "stream" when stdout, "final" when true, "running" and "truncated" when
// false, "cursor" when the default, "nothing_new" when false. next_offset
// and size are always there.
func statusLine(st readback.Status, ns newStatus) []byte {
	line := struct {
		Stream     string `json:"stream,omitempty"`
		NextOffset int64  `json:"next_offset"`
		Size       int64  `json:"size"`
		Final      *bool  `json:"final,omitempty"`
		Running    bool   `json:"running,omitempty"`
		Truncated  bool   `json:"truncated,omitempty"`
		NextLine   *int64 `json:"next_line,omitempty"`
		MidLine    bool   `json:"mid_line,omitempty"`
		Matches    *int   `json:"matches,omitempty"`
		Removed    bool   `json:"removed,omitempty"`
		Matched    bool   `json:"matched,omitempty"`
		TimedOut   bool   `json:"timed_out,omitempty"`
		Cursor     string `json:"cursor,omitempty"`
		NothingNew bool   `json:"nothing_new,omitempty"`
	}{NextOffset: st.NextOffset, Size: st.Size, Running: st.Running, Truncated: st.Truncated,
		NextLine: st.NextLine, MidLine: st.MidLine, Matches: st.Matches, Removed: st.Removed,
		Matched: st.Matched, TimedOut: st.TimedOut, NothingNew: ns.nothing}
	if ns.cursor != store.DefaultCursor {
		line.Cursor = ns.cursor
	}
	if st.Stream != store.Stdout {
		line.Stream = st.Stream
	}
	if !st.Final {
		line.Final = new(false)
	}
	b, _ := json.Marshal(line)
	return b
}

// untilMissed says that capture id ended before a line matched --until
// (a server that crashed: the port was in use), with how it ended and the
// last lines of the stream the follow did not print, where such a crash
// says why (issue 24: not a line of JSON alone).
func untilMissed(e *env, dir *store.Dir, id string, q readback.Query) {
	how := "ended"
	ent, err := dir.Entry(id)
	if err != nil {
		ent = store.Entry{ID: id} // Read opens the files by ID alone
	} else {
		switch state, code, sig := ent.ProcessStatus(); {
		case sig != nil:
			how = fmt.Sprintf("ended (%s %s)", state, *sig)
		case code != nil:
			how = fmt.Sprintf("ended (exit %d)", *code)
		default:
			how = fmt.Sprintf("ended (%s)", state)
		}
	}
	e.d.Errorf("capture %s %s before a line of either stream matched --until %s", id, how, text.ShellQuote(q.Until.String()))
	if q.Interleaved {
		return // both streams were printed
	}
	other := store.Stderr
	if q.Stream == store.Stderr {
		other = store.Stdout
	}
	var b bytes.Buffer
	lr := readback.LineRange{A: -untilLastLines}
	if _, err := readback.Read(&b, dir, ent, readback.Query{Stream: other, Lines: &lr, Limit: untilLastBytes}); err != nil || b.Len() == 0 {
		return
	}
	fmt.Fprintf(e.stderr, "capwrap: its last lines on %s:\n", other)
	for _, l := range strings.SplitAfter(strings.TrimSuffix(b.String(), "\n"), "\n") {
		fmt.Fprintf(e.stderr, "%s| %s\n", other, displayLine(strings.TrimSuffix(l, "\n"), matchShown))
	}
}

// Bounds of what untilMissed and the --until hints show: lines, bytes and
// characters per line.
const (
	untilLastLines = 5
	untilLastBytes = 2000
	matchShown     = 200
)

// displayLine is line cut to at most n characters ("…" where cut) with
// control characters shown as U+FFFD: a captured line quoted in a hint.
func displayLine(line string, n int) string {
	var b strings.Builder
	i := 0
	for _, r := range line {
		if i == n {
			b.WriteString("…")
			break
		}
		if r < 0x20 && r != '\t' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
		i++
	}
	return b.String()
}

// query is the read the options ask for, checked; the error is the usage
// error to say.
func (o *readOptions) query() (readback.Query, error) {
	q := o.q
	q.Offset, q.Limit = int64(o.offset), int64(o.limit)
	if q.Follow && !o.flags.Changed("limit") {
		q.Limit = readFollowLimit
	}
	if !o.flags.Changed("after-context") {
		q.Context.After = o.context
	}
	if !o.flags.Changed("before-context") {
		q.Context.Before = o.context
	}
	if err := o.checkNumbers(q); err != nil {
		return q, err
	}
	if err := o.compile(&q); err != nil {
		return q, err
	}
	return q, o.checkModes(q)
}

// checkNumbers checks the stream and the numbers of q, and that the grep
// flags come with --grep.
func (o *readOptions) checkNumbers(q readback.Query) error {
	switch {
	case q.Stream != store.Stdout && q.Stream != store.Stderr:
		return fmt.Errorf("invalid --stream %q: want stdout or stderr", q.Stream)
	case q.Limit <= 0:
		return fmt.Errorf("invalid --limit %d: must be at least 1 byte", q.Limit)
	case q.Max < 0:
		return fmt.Errorf("invalid --max %d: must not be negative", q.Max)
	case o.flags.Changed("max") && !o.flags.Changed("grep"):
		return errors.New("--max needs --grep")
	}
	for _, c := range []string{"context", "after-context", "before-context"} {
		n, _ := o.flags.GetInt(c)
		switch {
		case !o.flags.Changed(c):
		case !o.flags.Changed("grep"):
			return fmt.Errorf("--%s needs --grep", c)
		case n < 0 || n > maxGrepContext:
			return fmt.Errorf("invalid --%s %d: want 0 to %s lines", c, n, text.Commas(maxGrepContext))
		}
	}
	return nil
}

// compile adds --lines, --grep and --until to q.
func (o *readOptions) compile(q *readback.Query) error {
	if o.lines != "" {
		lr, err := readback.ParseLineRange(o.lines)
		if err != nil {
			return err
		}
		q.Lines = &lr
		if o.flags.Changed("offset") && lr.A != 0 {
			return errors.New("--offset takes --lines only without a start (--lines :B: from the offset to line B)")
		}
	}
	for _, re := range []struct {
		flag, expr string
		dst        **regexp.Regexp
	}{{"grep", o.grep, &q.Grep}, {"until", o.until, &q.Until}} {
		if !o.flags.Changed(re.flag) { // --grep '' is a grep, as grep's: it matches every line
			continue
		}
		var err error
		if *re.dst, err = regexp.Compile(re.expr); err != nil {
			return fmt.Errorf("invalid --%s: %v", re.flag, err)
		}
	}
	return nil
}

// checkModes checks that the modes of q go together.
func (o *readOptions) checkModes(q readback.Query) error {
	switch {
	case (q.Until != nil || o.flags.Changed("timeout")) && !q.Follow:
		return errors.New("--timeout and --until need --follow")
	case q.FollowTimeout < 0:
		return fmt.Errorf("invalid --timeout %v: must not be negative", q.FollowTimeout)
	case q.Follow && q.Grep != nil:
		return errors.New("--follow and --grep exclude each other")
	case q.Follow && q.Lines != nil && q.Lines.B != 0:
		return errors.New("--follow reads to the end: give --lines A: without an end")
	case q.Interleaved && (o.flags.Changed("stream") || q.Lines != nil || q.Grep != nil):
		return errors.New("--interleaved reads both streams by --offset and --limit; it takes no --stream, --lines or --grep")
	case o.flags.Changed("cursor") && !o.newOnly:
		return errors.New("--cursor needs --new")
	case o.newOnly && (o.flags.Changed("offset") || q.Lines != nil || q.Grep != nil || q.Follow):
		return errors.New("--new reads on from its cursor: it takes no --offset, --lines, --grep or --follow")
	case !store.ValidCursorName(o.cursor):
		return fmt.Errorf("invalid --cursor %q: want 1 to 64 of A-Z a-z 0-9 . _ -", o.cursor)
	}
	return nil
}

// readHints says what the status of a read of capture c means for the
// reader: still running, removed, ended with capwrap, abandoned (runRead
// adds how to continue a truncated read).
func readHints(c store.Entry, q readback.Query, status readback.Status, d diag) {
	id := c.ID
	switch {
	case status.Matched:
		where, runs := "", "; it has ended"
		if !q.Interleaved && status.MatchStream != q.Stream {
			where = " on " + status.MatchStream // a line not printed above: say it
		}
		if status.Running {
			runs = "; it runs on"
		}
		if where != "" {
			runs += ": " + displayLine(status.MatchLine, matchShown)
		}
		d.Hintf("capture %s printed a line matching --until%s%s", id, where, runs)
	case status.TimedOut && status.NextOffset == q.Offset:
		d.Hintf("capture %s still runs and printed nothing new within --timeout %v; a program whose output is not a terminal may hold it in a buffer: start it with `capwrap --pty always` (or PYTHONUNBUFFERED=1 for Python)%s",
			id, q.FollowTimeout, map[bool]string{true: "", false: "; --interleaved follows both streams"}[q.Interleaved])
	case status.TimedOut:
		d.Hintf("capture %s still runs after --timeout %v: this is what it committed so far; continue with --offset %d", id, q.FollowTimeout, status.NextOffset)
	case status.Running && !q.Follow:
		d.Hintf("capture %s is still running: this is the %d bytes committed so far; --follow waits for the rest", id, status.Size)
	case status.Removed:
		d.Hintf("capture %s ended and was not kept (--keep auto keeps no compact success): all of it was read before it went", id)
	case !status.Final && !status.Running && c.KilledWithCapwrap:
		d.Warnf("%s", killedWithCapwrapText(id))
	case !status.Final && !status.Running:
		d.Warnf("capture %s was abandoned (capwrap ended without a receipt): the stream holds what was committed", id)
	case status.Final && !status.Truncated && lostBytes(c):
		d.Hintf("capture %s is %s: the stream ends where capwrap stopped keeping it", id, c.CaptureStatus())
	}
}

// lostBytes reports whether capture c's receipt says that its files lack
// part of what the command wrote: keeping stopped (a limit, a full quota
// or disk, a write error, a stalled disk).
func lostBytes(c store.Entry) bool {
	r := c.CaptureStatus().Reason
	if r == nil {
		return false
	}
	switch *r {
	case receipt.ReasonCaptureLimit, receipt.ReasonDirectoryQuota, receipt.ReasonDiskFull, receipt.ReasonWriteError, receipt.ReasonWriterStalled:
		return true
	}
	return false
}

// continuation is the command that reads on from where a truncated read
// stopped, exactly (SPEC §8: it resumes where this one stopped and never
// repeats a range): the same query from the next line when the read
// stopped at a line's end in a line range, else from the next byte
// offset. dirFlag is the global --dir as given ("" if none).
func (o *readOptions) continuation(dirFlag, id string, q readback.Query, st readback.Status) string {
	args := []string{"capwrap"}
	if dirFlag != "" {
		args = append(args, "--dir", text.ShellQuote(dirFlag))
	}
	args = append(args, "read", id)
	switch {
	case q.Interleaved:
		args = append(args, "--interleaved")
	case q.Stream != store.Stdout:
		args = append(args, "--stream", q.Stream)
	}
	if q.Grep != nil {
		args = append(args, "--grep", text.ShellQuote(q.Grep.String()))
		if q.Context.Before == q.Context.After && q.Context.Before > 0 {
			args = append(args, "-C", strconv.Itoa(q.Context.Before))
		} else {
			if q.Context.Before > 0 {
				args = append(args, "-B", strconv.Itoa(q.Context.Before))
			}
			if q.Context.After > 0 {
				args = append(args, "-A", strconv.Itoa(q.Context.After))
			}
		}
		if q.Max > 0 && st.Matches != nil {
			left := q.Max - *st.Matches // what this page left of --max; the next batch when none
			if left <= 0 {
				left = q.Max
			}
			args = append(args, "--max", strconv.Itoa(left))
		}
	}
	if o.flags.Changed("limit") {
		args = append(args, "--limit", strconv.FormatInt(q.Limit, 10))
	}
	end := ""
	if q.Lines != nil && q.Lines.B != 0 {
		end = strconv.FormatInt(q.Lines.B, 10)
	}
	if q.Lines != nil && st.NextLine != nil && *st.NextLine > 0 && !st.MidLine {
		return strings.Join(append(args, "--lines", fmt.Sprintf("%d:%s", *st.NextLine, end)), " ")
	}
	args = append(args, "--offset", strconv.FormatInt(st.NextOffset, 10))
	if end != "" { // the range's end still holds
		args = append(args, "--lines", ":"+end)
	}
	return strings.Join(args, " ")
}
