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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/store/readback"
)

const (
	readUsage        = "capwrap read ID [--stream stdout|stderr] [--offset N] [--limit N] [--lines A:B] [--grep REGEX [--max N] [-C N] [-A N] [-B N]] [--follow [--timeout D] [--until REGEX]] [--interleaved]"
	readDefaultLimit = 64 << 10 // --limit default, bytes
	readStatusPrefix = "capwrap-read "
	maxGrepContext   = 10000 // -A, -B, -C: lines (8 bytes of memory each for -B)
)

func verbRead(args []string, o *options, stdout io.Writer, d diag) int {
	q, idArg, st, done := readQuery(args, o, stdout, d)
	if done {
		return st
	}
	dir, e, st := openCapture(o, idArg, d)
	if dir == nil {
		return st
	}
	defer dir.Close()
	q.Warnf = d.Warnf
	status, err := readback.Read(stdout, dir, e, q)
	if errors.Is(err, store.ErrNoArrival) {
		err = fmt.Errorf("capture %s has no arrival index (made by an older capwrap?); read each stream with --stream", e.ID)
	}
	if err != nil {
		d.Errorf("read %s: %v", e.ID, store.UnwrapPath(err))
		return verbFailed
	}
	readHints(e.ID, q, status, d)
	line, _ := json.Marshal(status)
	fmt.Fprintf(d.w, "%s%s\n", readStatusPrefix, line)
	if q.Until != nil && !status.Matched {
		return verbFailed // as grep does when nothing matched
	}
	return 0
}

// readQuery parses and checks the flags of `capwrap read` into a query and
// the ID argument; done says the verb is over with status, as parseVerb's.
func readQuery(args []string, o *options, stdout io.Writer, d diag) (q readback.Query, idArg string, status int, done bool) {
	fs := verbFlags("read")
	var offset, limit size = 0, readDefaultLimit
	var lines, grep, until string
	fs.StringVarP(&q.Stream, "stream", "s", "stdout", "the stream to read: stdout or stderr")
	fs.Var(&offset, "offset", "start at this byte offset (bytes, or 64K, 1M...)")
	fs.Var(&limit, "limit", "print at most this many bytes")
	fs.StringVarP(&lines, "lines", "n", "", "lines A:B, 1-based, inclusive; negative counts from the end (-50: is the last 50)")
	fs.StringVarP(&grep, "grep", "e", "", "print the lines matching this regular expression, with line numbers")
	fs.IntVar(&q.Max, "max", 0, "with --grep: stop after this many matching lines (0: no limit but --limit)")
	var context int
	fs.IntVarP(&context, "context", "C", 0, "with --grep: print this many lines before and after each match")
	fs.IntVarP(&q.Context.After, "after-context", "A", 0, "with --grep: print this many lines after each match")
	fs.IntVarP(&q.Context.Before, "before-context", "B", 0, "with --grep: print this many lines before each match")
	fs.BoolVarP(&q.Follow, "follow", "f", false, "wait for new bytes of a running capture until it ends")
	fs.Var(durationVar(&q.FollowTimeout, 0), "timeout", "with --follow: stop waiting after this long (0: when the capture ends)")
	fs.StringVar(&until, "until", "", "with --follow: stop after the first line matching this regular expression")
	fs.BoolVar(&q.Interleaved, "interleaved", false, "stdout and stderr merged in their order of arrival at capwrap")
	if st, done := parseVerb(fs, args, 1, readUsage, o, stdout, d); done {
		return q, "", st, true
	}
	q.Offset, q.Limit = int64(offset), int64(limit)
	if !fs.Changed("after-context") {
		q.Context.After = context
	}
	if !fs.Changed("before-context") {
		q.Context.Before = context
	}
	if err := completeReadQuery(&q, fs, lines, grep, until); err != nil {
		d.Errorf("read: %v", err)
		d.Hintf("usage: %s (capwrap help read)", readUsage)
		return q, "", verbUsage, true
	}
	return q, fs.Arg(0), 0, false
}

// completeReadQuery checks the flags parsed into q and adds --lines and
// --grep to it; the error is the usage error to print.
func completeReadQuery(q *readback.Query, fs *pflag.FlagSet, lines, grep, until string) error {
	if q.Stream != store.Stdout && q.Stream != store.Stderr {
		return fmt.Errorf("invalid --stream %q: want stdout or stderr", q.Stream)
	}
	if q.Limit <= 0 {
		return fmt.Errorf("invalid --limit %d: must be at least 1 byte", q.Limit)
	}
	if q.Max < 0 {
		return fmt.Errorf("invalid --max %d: must not be negative", q.Max)
	}
	if fs.Changed("max") && grep == "" {
		return errors.New("--max needs --grep")
	}
	for _, c := range []string{"context", "after-context", "before-context"} {
		n, _ := fs.GetInt(c)
		switch {
		case !fs.Changed(c):
		case grep == "":
			return fmt.Errorf("--%s needs --grep", c)
		case n < 0 || n > maxGrepContext:
			return fmt.Errorf("invalid --%s %d: want 0 to %s lines", c, n, text.Commas(maxGrepContext))
		}
	}
	if lines != "" {
		lr, err := readback.ParseLineRange(lines)
		if err != nil {
			return err
		}
		q.Lines = &lr
		if fs.Changed("offset") {
			return errors.New("--offset and --lines exclude each other")
		}
	}
	if grep != "" {
		re, err := regexp.Compile(grep)
		if err != nil {
			return fmt.Errorf("invalid --grep: %v", err)
		}
		q.Grep = re
	}
	if until != "" {
		re, err := regexp.Compile(until)
		if err != nil {
			return fmt.Errorf("invalid --until: %v", err)
		}
		q.Until = re
	}
	switch {
	case (q.Until != nil || fs.Changed("timeout")) && !q.Follow:
		return errors.New("--timeout and --until need --follow")
	case q.FollowTimeout < 0:
		return fmt.Errorf("invalid --timeout %v: must not be negative", q.FollowTimeout)
	case q.Follow && q.Grep != nil:
		return errors.New("--follow and --grep exclude each other")
	case q.Follow && q.Interleaved:
		return errors.New("--follow and --interleaved exclude each other")
	case q.Follow && q.Lines != nil && q.Lines.B != 0:
		return errors.New("--follow reads to the end: give --lines A: without an end")
	case q.Interleaved && (fs.Changed("stream") || q.Lines != nil || q.Grep != nil):
		return errors.New("--interleaved reads both streams by --offset and --limit; it takes no --stream, --lines or --grep")
	}
	return nil
}

// readHints says what the status of a read of capture id means for the
// reader: still running, removed, abandoned, and how to continue a
// truncated read.
func readHints(id string, q readback.Query, status readback.Status, d diag) {
	switch {
	case status.Matched:
		d.Hintf("capture %s printed a line matching --until; it runs on", id)
	case status.TimedOut:
		d.Hintf("capture %s still runs after --timeout %v: this is what it committed so far; continue with --offset %d", id, q.FollowTimeout, status.NextOffset)
	case status.Running && !q.Follow:
		d.Hintf("capture %s is still running: this is the %d bytes committed so far; --follow waits for the rest", id, status.Size)
	case status.Removed:
		d.Hintf("capture %s ended and was not kept (--keep auto keeps no compact success): all of it was read before it went", id)
	case !status.Final && !status.Running:
		d.Warnf("capture %s was abandoned (capwrap ended without a receipt): the stream holds what was committed", id)
	}
	if !status.Truncated {
		return
	}
	switch {
	case q.Lines != nil && status.NextLine != nil:
		end := ""
		if q.Lines.B != 0 {
			end = strconv.FormatInt(q.Lines.B, 10)
		}
		d.Hintf("more follows: continue with --lines %d:%s", *status.NextLine, end)
	case q.Lines != nil:
		d.Hintf("more follows: continue with --offset %d instead of --lines", status.NextOffset)
	default:
		d.Hintf("more follows: continue with --offset %d", status.NextOffset)
	}
}
