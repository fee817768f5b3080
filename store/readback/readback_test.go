package readback

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/capwrap/capwrap/receipt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/capwrap/capwrap/store"
)

func TestCopyRange(t *testing.T) {
	c := "aaa\nbbb\nccc\n"
	tests := []struct {
		lo, hi, limit int64
		want          string
		trunc         bool
	}{
		{0, 12, 100, c, false},
		{0, 12, 12, c, false}, // exactly the limit: whole, not truncated
		{0, 12, 11, "aaa\nbbb\n", true},
		{0, 12, 9, "aaa\nbbb\n", true},
		{0, 12, 8, "aaa\nbbb\n", true}, // the cut falls on a newline
		{0, 12, 2, "aa", true},         // no whole line fits: cut mid-line
		{0, 12, 1, "a", true},
		{4, 12, 5, "bbb\n", true},
		{5, 10, 100, "bb\ncc", false}, // a range need not start or end a line
		{12, 12, 10, "", false},
	}
	for _, tt := range tests {
		// Blocks under, at and over the line length.
		for _, block := range []int{1, 3, 4, 5, scanBlock} {
			var out bytes.Buffer
			n, nl, trunc, err := copyRange(&out, strings.NewReader(c), tt.lo, tt.hi, tt.limit, make([]byte, block))
			if err != nil || out.String() != tt.want || trunc != tt.trunc || n != int64(len(tt.want)) || nl != int64(strings.Count(tt.want, "\n")) {
				t.Errorf("copyRange(%d, %d, limit %d) block %d = %q, %d, %d, %v, %v; want %q, truncated %v",
					tt.lo, tt.hi, tt.limit, block, out.String(), n, nl, trunc, err, tt.want, tt.trunc)
			}
		}
	}
}

// TestCopyRangeShortFile: a file shorter than the range asked (truncated
// meanwhile) gives what it has and io.ErrUnexpectedEOF.
func TestCopyRangeShortFile(t *testing.T) {
	var out bytes.Buffer
	n, _, _, err := copyRange(&out, strings.NewReader("abcde"), 1, 10, 100, make([]byte, 3))
	if !errors.Is(err, io.ErrUnexpectedEOF) || n != 4 || out.String() != "bcde" {
		t.Errorf("copyRange past the end = %q, %d, %v; want \"bcde\", 4, io.ErrUnexpectedEOF", out.String(), n, err)
	}
}

func TestGrepRange(t *testing.T) {
	const c = "a1\nb\na2\n" // lines at 0, 3, 5; 8 bytes
	long := strings.Repeat("z", grepBlock+10)
	needle := strings.Repeat("x", 2000) + "NEEDLE" + strings.Repeat("y", 1000) + "\nhit\n"
	tests := []struct {
		name              string
		content           string
		lo, hi, firstLine int64
		re                string
		max               int
		limit             int64
		want              string
		res               grepResult
	}{
		{"all", c, 0, 8, 1, "a", 0, 100, "1:a1\n3:a2\n", grepResult{8, 4, 2, false, false}},
		{"none", c, 0, 8, 1, "x", 0, 100, "", grepResult{8, 4, 0, false, false}},
		{"max stops", c, 0, 8, 1, "a", 1, 100, "1:a1\n", grepResult{3, 2, 1, true, false}},
		{"max at the end", c, 0, 8, 1, "a", 2, 100, "1:a1\n3:a2\n", grepResult{8, 4, 2, false, false}},
		{"limit before a match", c, 0, 8, 1, "a", 0, 6, "1:a1\n", grepResult{5, 3, 1, true, false}},
		{"limit exactly", c, 0, 8, 1, "a", 0, 10, "1:a1\n3:a2\n", grepResult{8, 4, 2, false, false}},
		{"first match cut", c, 0, 8, 1, "a", 0, 3, "1:a", grepResult{3, 2, 0, true, false}},
		{"part of the file", c, 0, 5, 1, "a", 0, 100, "1:a1\n", grepResult{5, 3, 1, false, false}},
		{"numbered from firstLine", c, 3, 8, 2, "a|b", 0, 100, "2:b\n3:a2\n", grepResult{8, 4, 2, false, false}},
		{"relative numbers", c, 3, 8, 0, "a", 0, 100, "2:a2\n", grepResult{8, 0, 1, false, false}},
		{"no final newline", "x\nab", 0, 4, 1, "b", 0, 100, "2:ab\n", grepResult{4, 2, 1, false, false}},
		{"anchors see the line without its newline", c, 0, 8, 1, "^b$", 0, 100, "2:b\n", grepResult{8, 4, 1, false, false}},
		{"a needle inside a long line: its window", needle, 0, int64(len(needle)), 1, "NEEDLE", 0, 1000,
			"1@2000:…" + strings.Repeat("x", grepWindow) + "NEEDLE" + strings.Repeat("y", grepWindow) + "…\n",
			grepResult{int64(len(needle)), 3, 1, false, false}},
		{"each match a window, then the lines after", needle + needle, 0, int64(2 * len(needle)), 1, "NEEDLE|hit", 0, 1000,
			"1@2000:…" + strings.Repeat("x", grepWindow) + "NEEDLE" + strings.Repeat("y", grepWindow) + "…\n2:hit\n" +
				"3@" + fmt.Sprint(len(needle)+2000) + ":…" + strings.Repeat("x", grepWindow) + "NEEDLE" + strings.Repeat("y", grepWindow) + "…\n4:hit\n",
			grepResult{int64(2 * len(needle)), 5, 4, false, false}},
		{"a window at the line's end, in the line's second piece", long + "Q\nhit\n", 0, int64(len(long)) + 6, 1, "Q", 0, 1000,
			fmt.Sprintf("1@%d:…", len(long)) + long[grepBlock:] + "Q\n", // the window begins at the piece's start
			grepResult{int64(len(long)) + 6, 3, 1, false, false}},
		{"a window that does not fit: the next read starts at its match", needle, 0, int64(len(needle)), 1, "NEEDLE", 0, 100,
			"", grepResult{2000, 1, 0, true, true}},
		{"max inside a long line, reached", "aQbQc" + strings.Repeat("d", grepLongLine) + "\n", 0, grepLongLine + 6, 1, "Q", 1, 1000,
			"1@1:aQbQc" + strings.Repeat("d", grepWindow-3) + "…\n", grepResult{grepLongLine + 6, 2, 1, false, false}}, // the second Q is in the window
		{"matches inside a window are not printed again", strings.Repeat("ab", 1000) + "\n", 0, 2001, 1, "a", 0, 1000,
			"1@0:" + strings.Repeat("ab", 60) + "a…\n" +
				"1@122:…" + strings.Repeat("ab", 120) + "a…\n" +
				"1@244:…" + strings.Repeat("ab", 120) + "a…\n" +
				"1@366:…" + strings.Repeat("ab", 120) + "a…\n",
			grepResult{488, 1, 4, true, true}},
		{"max inside a long line, a match left", "aQ" + strings.Repeat("d", 500) + "Q" + strings.Repeat("d", 600) + "\n", 0, 1104, 1, "Q", 1, 1000,
			"1@1:aQ" + strings.Repeat("d", grepWindow) + "…\n", grepResult{502, 1, 1, true, true}},
		{"after a long line", long + "\nhit\n", 0, int64(len(long)) + 5, 1, "hit", 0, 100,
			"2:hit\n", grepResult{int64(len(long)) + 5, 3, 1, false, false}},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		res, err := grepRange(&out, strings.NewReader(tt.content), tt.lo, tt.hi, tt.firstLine, regexp.MustCompile(tt.re), tt.max, tt.limit, Context{})
		if err != nil || out.String() != tt.want || res != tt.res {
			got := out.String()
			if len(got) > 80 {
				got = fmt.Sprintf("%d bytes", len(got))
			}
			t.Errorf("%s: grepRange = %s, %+v, %v; want %+v", tt.name, got, res, err, tt.res)
		}
	}
}

// TestGrepRangeContext: -B/-A/-C as grep prints them: matches "LINE:text",
// context "LINE-text", "--" between groups that do not touch, overlapping
// or touching groups merged, all within the limit; a group that does not
// fit is left whole for the next read, except the first, which goes
// without its context (issue 15).
func TestGrepRangeContext(t *testing.T) {
	// Lines 1..13; X at 3, 9 and 11. Line 5 starts at 9, 7 at 13, 8 at 15.
	const c = "a\nb\nX1\nc\nd\ne\nf\ng\nX2\nh\nX3\ni\nj\n"
	long := strings.Repeat("z", grepBlock+10)
	tests := []struct {
		name          string
		content       string
		lo, firstLine int64
		ctx           Context
		max           int
		limit         int64
		want          string
		res           grepResult
	}{
		{"-C1", c, 0, 1, Context{1, 1}, 0, 1000,
			"2-b\n3:X1\n4-c\n--\n8-g\n9:X2\n10-h\n11:X3\n12-i\n", grepResult{29, 14, 3, false, false}},
		{"-B2", c, 0, 1, Context{2, 0}, 0, 1000,
			"1-a\n2-b\n3:X1\n--\n7-f\n8-g\n9:X2\n10-h\n11:X3\n", grepResult{29, 14, 3, false, false}},
		{"-A2", c, 0, 1, Context{0, 2}, 0, 1000,
			"3:X1\n4-c\n5-d\n--\n9:X2\n10-h\n11:X3\n12-i\n13-j\n", grepResult{29, 14, 3, false, false}},
		{"-C3: groups that touch merge", c, 0, 1, Context{3, 3}, 0, 1000,
			"1-a\n2-b\n3:X1\n4-c\n5-d\n6-e\n7-f\n8-g\n9:X2\n10-h\n11:X3\n12-i\n13-j\n", grepResult{29, 14, 3, false, false}},
		{"--max 1 -A1: the after-context still", c, 0, 1, Context{0, 1}, 1, 1000,
			"3:X1\n4-c\n", grepResult{9, 5, 1, true, false}},
		{"--max 1 -B1", c, 0, 1, Context{1, 0}, 1, 1000,
			"2-b\n3:X1\n", grepResult{7, 4, 1, true, false}},
		{"a group that does not fit is left whole", c, 0, 1, Context{1, 1}, 0, 20,
			"2-b\n3:X1\n4-c\n", grepResult{15, 8, 1, true, false}},
		{"after-context cut at the limit", c, 0, 1, Context{0, 2}, 0, 12,
			"3:X1\n4-c\n", grepResult{9, 5, 1, true, false}},
		{"the first match without its context", c, 0, 1, Context{2, 0}, 0, 6,
			"3:X1\n", grepResult{13, 7, 1, true, false}},
		{"the first match cut", c, 0, 1, Context{2, 2}, 0, 3,
			"3:X", grepResult{7, 4, 0, true, false}},
		{"no context before the range", c, 4, 3, Context{2, 0}, 0, 1000,
			"3:X1\n--\n7-f\n8-g\n9:X2\n10-h\n11:X3\n", grepResult{29, 14, 3, false, false}},
		{"relative numbers", c, 13, 0, Context{1, 1}, 0, 1000,
			"2-g\n3:X2\n4-h\n5:X3\n6-i\n", grepResult{29, 0, 2, false, false}},
		{"a long line as context, in pieces", long + "\nX\n", 0, 1, Context{1, 0}, 0, 3 * grepBlock,
			"1-" + long[:grepBlock] + "\n1-" + long[grepBlock:] + "\n2:X\n", grepResult{int64(len(long)) + 3, 3, 1, false, false}},
		{"the pieces of the match line before it", long + "X\nb\n", 0, 1, Context{1, 1}, 0, 3 * grepBlock,
			fmt.Sprintf("1@%d:…", len(long)) + long[grepBlock:] + "X\n2-b\n", grepResult{int64(len(long)) + 4, 3, 1, false, false}}, // a window: no before-context
	}
	for _, tt := range tests {
		var out bytes.Buffer
		res, err := grepRange(&out, strings.NewReader(tt.content), tt.lo, int64(len(tt.content)), tt.firstLine, regexp.MustCompile("X"), tt.max, tt.limit, tt.ctx)
		if err != nil || out.String() != tt.want || res != tt.res {
			got, want := out.String(), tt.want
			if len(got) > 200 || len(want) > 200 {
				got, want = fmt.Sprintf("%d bytes", len(got)), fmt.Sprintf("%d bytes", len(want))
			}
			t.Errorf("%s: grepRange = %q, %+v, %v; want %q, %+v", tt.name, got, res, err, want, tt.res)
		}
		if int64(out.Len()) > tt.limit {
			t.Errorf("%s: printed %d bytes, limit %d", tt.name, out.Len(), tt.limit)
		}
	}
}

// arrivals returns a record source over recs, as ArrivalReader.Next.
func arrivals(recs ...store.ArrivalRecord) func() (store.ArrivalRecord, error) {
	return func() (store.ArrivalRecord, error) {
		if len(recs) == 0 {
			return store.ArrivalRecord{}, io.EOF
		}
		r := recs[0]
		recs = recs[1:]
		return r, nil
	}
}

// interleaveCase is a case of TestInterleave: two streams, their arrival
// records, and what an interleaved read of them prints.
type interleaveCase struct {
	name          string
	stdout        string
	stderr        string
	recs          []store.ArrivalRecord
	running       bool
	offset, limit int64
	want          string
	next          int64
	truncated     bool
	uncovered     string // what the warning was told, "" when not called
}

func interleaveCases() []interleaveCase {
	out4 := "out1\nout2\nout3\nout4\n"
	err4 := "err1\nerr2\nerr3\nerr4\n"
	var alternate []store.ArrivalRecord
	for i := range int64(4) {
		alternate = append(alternate, store.ArrivalRecord{Stream: store.Stdout, Offset: 5 * i, Length: 5}, store.ArrivalRecord{Stream: store.Stderr, Offset: 5 * i, Length: 5})
	}
	return []interleaveCase{
		{"alternate", out4, err4, alternate, false, 0, 1000,
			"stdout| out1\nstderr| err1\nstdout| out2\nstderr| err2\nstdout| out3\nstderr| err3\nstdout| out4\nstderr| err4\n", 40, false, ""},
		{"offset and limit", out4, err4, alternate, false, 25, 30,
			"stderr| err3\nstdout| out4\n", 35, true, ""},
		{"offset past the end", out4, err4, alternate, false, 50, 30, "", 50, false, ""},
		{"a line cut by the other stream", "abcdef\n", "E\n",
			[]store.ArrivalRecord{{Stream: store.Stdout, Offset: 0, Length: 3}, {Stream: store.Stderr, Offset: 0, Length: 2}, {Stream: store.Stdout, Offset: 3, Length: 4}}, false, 0, 1000,
			"stdout| abc\nstderr| E\nstdout+ def\n", 9, false, ""},
		{"an unfinished last line is ended", "abc", "",
			[]store.ArrivalRecord{{Stream: store.Stdout, Offset: 0, Length: 3}}, false, 0, 1000, "stdout| abc\n", 3, false, ""},
		{"offset mid-line", "hello\n", "", []store.ArrivalRecord{{Stream: store.Stdout, Offset: 0, Length: 6}}, false, 2, 1000,
			"stdout+ llo\n", 6, false, ""},
		{"the first line is cut to fit", "abcdefgh\n", "", []store.ArrivalRecord{{Stream: store.Stdout, Offset: 0, Length: 9}}, false, 0, 10,
			"stdout| ab", 2, true, ""},
		{"no room for a label", "abcdefgh\n", "", []store.ArrivalRecord{{Stream: store.Stdout, Offset: 0, Length: 9}}, false, 0, 8,
			"", 0, true, ""},
		{"a later line is not cut", "a\nbcdefgh\n", "", []store.ArrivalRecord{{Stream: store.Stdout, Offset: 0, Length: 10}}, false, 0, 20,
			"stdout| a\n", 2, true, ""},
		{"the index ends early", "a\nb\n", "E\n", []store.ArrivalRecord{{Stream: store.Stdout, Offset: 0, Length: 2}}, false, 0, 1000,
			"stdout| a\nstdout| b\nstderr| E\n", 6, false, "2 2"},
		{"running: stop at a chunk not committed", "a\n", "E", []store.ArrivalRecord{{Stream: store.Stdout, Offset: 0, Length: 2}, {Stream: store.Stderr, Offset: 0, Length: 2}}, true, 0, 1000,
			"stdout| a\n", 2, false, ""},
		{"running: no warning for bytes not yet indexed", "a\nb\n", "", []store.ArrivalRecord{{Stream: store.Stdout, Offset: 0, Length: 2}}, true, 0, 1000,
			"stdout| a\n", 2, false, ""},
		{"finished: a record past the file is cut", "a\n", "", []store.ArrivalRecord{{Stream: store.Stdout, Offset: 0, Length: 5}}, false, 0, 1000,
			"stdout| a\n", 2, false, ""},
	}
}

func TestInterleave(t *testing.T) {
	tests := interleaveCases()
	for _, tt := range tests {
		// Blocks shorter than the lines give the same output while the
		// budget lasts. (When it runs out, a line that crosses a block
		// boundary may be printed up to it: whole lines are per block.)
		blocks := []int{scanBlock}
		if !tt.truncated {
			blocks = append(blocks, 1, 3)
		}
		for _, block := range blocks {
			var out bytes.Buffer
			w := bufio.NewWriter(&out)
			files := [2]io.ReaderAt{strings.NewReader(tt.stdout), strings.NewReader(tt.stderr)}
			sizes := [2]int64{int64(len(tt.stdout)), int64(len(tt.stderr))}
			iv := newInterleaver(w, files, sizes, tt.offset, tt.limit)
			iv.buf = make([]byte, block)
			uncovered := ""
			next, truncated, err := iv.run(arrivals(tt.recs...), tt.running, func(rest [2]int64) { uncovered = fmt.Sprint(rest[0], rest[1]) })
			w.Flush()
			if err != nil || out.String() != tt.want || next != tt.next || truncated != tt.truncated || uncovered != tt.uncovered {
				t.Errorf("%s, block %d: got %q, next %d, truncated %v, uncovered %q, %v; want %q, %d, %v, %q",
					tt.name, block, out.String(), next, truncated, uncovered, err, tt.want, tt.next, tt.truncated, tt.uncovered)
			}
			if int64(out.Len()) > tt.limit {
				t.Errorf("%s: %d bytes printed, limit %d", tt.name, out.Len(), tt.limit)
			}
		}
	}
}

// writeCapture writes chunks to c's streams in order, through its arrival
// index: even chunks to stdout, odd ones to stderr; then finalizes and
// publishes it.
func writeCapture(t *testing.T, c *store.Capture, chunks ...string) {
	t.Helper()
	a, err := c.Arrival(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i, ch := range chunks {
		s := []string{store.Stdout, store.Stderr}[i%2]
		writeAll(c.Stream(s), []byte(ch), len(ch))
		a.Writer(s).Write([]byte(ch))
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	publish(t, c)
}

func publish(t *testing.T, c *store.Capture) {
	t.Helper()
	if _, err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	id := c.ID()
	if err := c.Publish(&receipt.Receipt{Schema: receipt.Schema, ID: &id}); err != nil {
		t.Fatal(err)
	}
}

// TestRead reads a finished capture back through Read, every mode but
// follow.
func TestRead(t *testing.T) {
	d, c := newTestCapture(t)
	writeCapture(t, c, "one\ntwo\n", "E1\n", "three\nfour\n", "E2\n")
	e, err := d.Entry(c.ID())
	if err != nil {
		t.Fatal(err)
	}
	lines := func(a, b int64) *LineRange { return &LineRange{a, b} }
	tests := []struct {
		name string
		q    Query
		want string
		st   Status
	}{
		{"all", Query{Stream: store.Stdout, Limit: 100}, "one\ntwo\nthree\nfour\n",
			Status{Stream: store.Stdout, NextOffset: 19, Size: 19, Final: true}},
		{"bytes cut after a line", Query{Stream: store.Stdout, Offset: 4, Limit: 6}, "two\n",
			Status{Stream: store.Stdout, NextOffset: 8, Size: 19, Final: true, Truncated: true}},
		{"bytes inside a line", Query{Stream: store.Stdout, Offset: 9, Limit: 3}, "hre",
			Status{Stream: store.Stdout, NextOffset: 12, Size: 19, Final: true, Truncated: true, MidLine: true}},
		{"a line read cut inside its line: no next line", Query{Stream: store.Stdout, Lines: lines(3, 0), Limit: 3}, "thr",
			Status{Stream: store.Stdout, NextOffset: 11, Size: 19, Final: true, Truncated: true, MidLine: true}},
		{"stderr", Query{Stream: store.Stderr, Limit: 100}, "E1\nE2\n",
			Status{Stream: store.Stderr, NextOffset: 6, Size: 6, Final: true}},
		{"lines cut to whole lines", Query{Stream: store.Stdout, Lines: lines(2, 0), Limit: 12}, "two\nthree\n",
			Status{Stream: store.Stdout, NextOffset: 14, Size: 19, Final: true, Truncated: true, NextLine: new(int64(4))}},
		{"last line", Query{Stream: store.Stdout, Lines: lines(-1, 0), Limit: 100}, "four\n",
			Status{Stream: store.Stdout, NextOffset: 19, Size: 19, Final: true}},
		{"interleaved", Query{Interleaved: true, Limit: 100}, "stdout| one\nstdout| two\nstderr| E1\nstdout| three\nstdout| four\nstderr| E2\n",
			Status{Stream: StreamInterleaved, NextOffset: 25, Size: 25, Final: true}},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		st, err := Read(&out, d, e, tt.q)
		got, _ := json.Marshal(st)
		want, _ := json.Marshal(tt.st)
		if err != nil || out.String() != tt.want || string(got) != string(want) {
			t.Errorf("%s: got %q, %s, %v; want %q, %s", tt.name, out.String(), got, err, tt.want, want)
		}
	}

	var out bytes.Buffer
	st, err := Read(&out, d, e, Query{Stream: store.Stdout, Grep: regexp.MustCompile("o"), Max: 2, Limit: 100})
	if err != nil || out.String() != "1:one\n2:two\n" || st.Matches == nil || *st.Matches != 2 || *st.NextLine != 3 || !st.Truncated {
		t.Errorf("grep: got %q, %+v, %v", out.String(), st, err)
	}
	out.Reset()
	st, err = Read(&out, d, e, Query{Stream: store.Stdout, Grep: regexp.MustCompile("^f"), Context: Context{Before: 1, After: 1}, Limit: 100})
	if err != nil || out.String() != "3-three\n4:four\n" || *st.Matches != 1 || *st.NextLine != 5 || st.Truncated {
		t.Errorf("grep with context: got %q, %+v, %v", out.String(), st, err)
	}
	for _, q := range []Query{
		{Stream: store.Stdout},
		{Stream: store.Stdout, Limit: 10, Offset: 1, Lines: lines(1, 2)},
		{Stream: store.Stdout, Limit: 10, Follow: true, Grep: regexp.MustCompile("x")},
		{Interleaved: true, Limit: 10, Lines: lines(1, 2)},
		{Stream: "stdin", Limit: 10},
		{Stream: store.Stdout, Limit: 10, Context: Context{After: 1}},
		{Stream: store.Stdout, Limit: 10, Grep: regexp.MustCompile("x"), Context: Context{Before: -1}},
	} {
		if _, err := Read(io.Discard, d, e, q); err == nil {
			t.Errorf("Read(%+v) accepted", q)
		}
	}
}

func TestReadInterleavedWithoutIndex(t *testing.T) {
	d, c := newTestCapture(t)
	writeAll(c.Stream(store.Stdout), []byte("x\n"), 2)
	publish(t, c)
	e, err := d.Entry(c.ID())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(io.Discard, d, e, Query{Interleaved: true, Limit: 10}); !errors.Is(err, store.ErrNoArrival) {
		t.Errorf("interleaved read without an index: %v, want store.ErrNoArrival", err)
	}
}

// TestReadFollow follows a running capture to its end: the bytes written
// before and after the read started, and a final status.
func TestReadFollow(t *testing.T) {
	d, c := newTestCapture(t)
	out := c.Stream(store.Stdout)
	writeAll(out, []byte("a\n"), 2)
	for out.Committed() < 2 {
		time.Sleep(time.Millisecond)
	}
	e, err := d.Entry(c.ID())
	if err != nil || !e.Running {
		t.Fatalf("entry %+v, %v", e, err)
	}
	pr, pw := io.Pipe()
	type result struct {
		st  Status
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := Read(pw, d, e, Query{Stream: store.Stdout, Limit: 100, Follow: true})
		pw.Close()
		done <- result{st, err}
	}()
	br := bufio.NewReader(pr)
	if line, err := br.ReadString('\n'); err != nil || line != "a\n" {
		t.Fatalf("first line %q, %v", line, err) // flushed while the capture runs
	}
	writeAll(out, []byte("b\n"), 2)
	publish(t, c)
	rest, _ := io.ReadAll(br)
	r := <-done
	if r.err != nil || string(rest) != "b\n" || r.st != (Status{Stream: store.Stdout, NextOffset: 4, Size: 4, Final: true}) {
		t.Errorf("followed to the end: %q, %+v, %v", rest, r.st, r.err)
	}
}

// TestReadFollowUntil: --until stops right after the first matching line,
// even one split over two writes; --timeout stops a running capture's
// follow; neither waits for the capture's end.
func TestReadFollowUntil(t *testing.T) {
	d, c := newTestCapture(t)
	out := c.Stream(store.Stdout)
	writeAll(out, []byte("starting\nServing HT"), 19)
	writeAll(out, []byte("TP on port 80\nafter\n"), 20)
	for out.Committed() < 39 {
		time.Sleep(time.Millisecond)
	}
	e, err := d.Entry(c.ID())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	st, err := Read(&b, d, e, Query{Stream: store.Stdout, Limit: 1000, Follow: true, Until: regexp.MustCompile(`Serving HTTP`)})
	if err != nil || b.String() != "starting\nServing HTTP on port 80\n" || !st.Matched || st.NextOffset != 33 || !st.Running {
		t.Errorf("until: %q, %+v, %v", b.String(), st, err)
	}
	b.Reset()
	start := time.Now()
	st, err = Read(&b, d, e, Query{Stream: store.Stdout, Offset: 33, Limit: 1000, Follow: true, FollowTimeout: 200 * time.Millisecond,
		Until: regexp.MustCompile(`never`)})
	if err != nil || b.String() != "after\n" || st.Matched || !st.TimedOut || time.Since(start) < 200*time.Millisecond {
		t.Errorf("timeout: %q, %+v, %v after %v", b.String(), st, err, time.Since(start))
	}
	publish(t, c)
}

// TestLineMatcherPieces: a line longer than the grep block is matched in
// pieces, and the carry of a partial line survives between scans.
func TestLineMatcherPieces(t *testing.T) {
	long := strings.Repeat("x", grepBlock+10) + "needle\n"
	m := &lineMatcher{re: regexp.MustCompile("needle")}
	r := strings.NewReader(long)
	end, hit, err := m.scan(r, 0, int64(len(long)), make([]byte, 4096))
	if err != nil || !hit || end != int64(len(long)) {
		t.Errorf("long line: end %d of %d, hit %v, %v", end, len(long), hit, err)
	}
	m = &lineMatcher{re: regexp.MustCompile("^ab$")}
	r = strings.NewReader("ab\n")
	if end, hit, _ := m.scan(r, 0, 1, make([]byte, 8)); hit || end != 1 {
		t.Errorf("first piece: %d %v", end, hit)
	}
	if end, hit, _ := m.scan(r, 1, 3, make([]byte, 8)); !hit || end != 3 {
		t.Errorf("second piece: %d %v", end, hit)
	}
}

// newTestCapture opens a tool-outputs directory in a temporary directory
// and creates a capture in it.
func newTestCapture(t *testing.T) (*store.Dir, *store.Capture) {
	t.Helper()
	d, _, err := store.Open(filepath.Join(t.TempDir(), "tool-outputs"), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	c, err := d.Create(time.Now(), store.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return d, c
}

// writeAll writes data to w in writes of n bytes.
func writeAll(w *store.StreamWriter, data []byte, n int) {
	for len(data) > 0 {
		k := min(n, len(data))
		if got, err := w.Write(data[:k]); got != k || err != nil {
			panic(fmt.Sprintf("Write = %d, %v", got, err))
		}
		data = data[k:]
	}
}

// TestGrepPieceEdges: in a line longer than grepBlock, searched a piece at
// a time, ^, $ and \b do not match at a piece's edges as if the line began
// or ended there (the expression sees the bytes on either side).
func TestGrepPieceEdges(t *testing.T) {
	head := strings.Repeat(".", grepBlock-3) + "END" // the first piece ends with END
	line := "a\n" + head + "START" + strings.Repeat(".", 100) + "\n"
	for _, re := range []string{`END$`, `^START`, `\bSTART`, `^\.`} {
		var out bytes.Buffer
		res, err := grepRange(&out, strings.NewReader(line), 0, int64(len(line)), 1, regexp.MustCompile(re), 0, 100000, Context{})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if re == `^\.` {
			want = 1 // the line's own start
		}
		if res.matches != want {
			t.Errorf("%s: %d matches, want %d:\n%.300s", re, res.matches, want, out.String())
		}
	}
}

// TestGrepWindowsMaxWithContext: --max reached in a long line's windows
// with an after-context prints that context and no match after it, as for
// a short line.
func TestGrepWindowsMaxWithContext(t *testing.T) {
	c := "Q" + strings.Repeat("d", 2000) + "\nafter\nQ again\n"
	var out bytes.Buffer
	res, err := grepRange(&out, strings.NewReader(c), 0, int64(len(c)), 1, regexp.MustCompile("Q"), 1, 100000, Context{After: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := "1@0:Q" + strings.Repeat("d", grepWindow) + "…\n2-after\n"
	if out.String() != want || res.matches != 1 || !res.truncated {
		t.Errorf("grep = %q, %+v; want %q, 1 match, truncated", out.String(), res, want)
	}
}

// TestFollowUntilBothStreams: --until matches a line of either stream
// (SPEC §8); a followed read of one stream counts the other's lines from
// the bytes that arrived after its start (arrivedBefore), and an
// interleaved follow stops right after the matching line.
func TestFollowUntilBothStreams(t *testing.T) {
	d, c := newTestCapture(t)
	// stdout "boot\n", stderr "listening\n", stdout "req\n", stderr "late\n".
	writeCapture(t, c, "boot\n", "listening\n", "req\n", "late\n")
	e, err := d.Entry(c.ID())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		q           Query
		out         string
		matched     bool
		matchStream string
		matchLine   string
	}{
		{"stdout, match on stderr", Query{Stream: store.Stdout, Until: regexp.MustCompile("listen")}, "boot\nreq\n", true, store.Stderr, "listening"},
		{"stdout from 5: stderr's line came before", Query{Stream: store.Stdout, Offset: 5, Until: regexp.MustCompile("listen")}, "req\n", false, "", ""},
		{"stdout from 5: a later stderr line", Query{Stream: store.Stdout, Offset: 5, Until: regexp.MustCompile("late")}, "req\n", true, store.Stderr, "late"},
		{"stderr, match on stdout", Query{Stream: store.Stderr, Until: regexp.MustCompile("^req$")}, "listening\nlate\n", true, store.Stdout, "req"},
		{"stderr from 10: stdout's req came before", Query{Stream: store.Stderr, Offset: 10, Until: regexp.MustCompile("^req$")}, "late\n", false, "", ""},
		{"stdout, match on its own line", Query{Stream: store.Stdout, Until: regexp.MustCompile("boot")}, "boot\n", true, store.Stdout, "boot"},
		{"interleaved", Query{Interleaved: true, Until: regexp.MustCompile("listen")}, "stdout| boot\nstderr| listening\n", true, store.Stderr, "listening"},
		{"interleaved, no match", Query{Interleaved: true, Until: regexp.MustCompile("never")}, "stdout| boot\nstderr| listening\nstdout| req\nstderr| late\n", false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			q.Follow, q.Limit = true, 1000
			var b strings.Builder
			st, err := Read(&b, d, e, q)
			if err != nil || b.String() != tc.out || st.Matched != tc.matched || st.MatchStream != tc.matchStream || st.MatchLine != tc.matchLine || st.Truncated {
				t.Errorf("got %q, %+v, %v; want %q, matched %v on %q: %q", b.String(), st, err, tc.out, tc.matched, tc.matchStream, tc.matchLine)
			}
		})
	}
}

// TestFollowInterleavedGrows: an interleaved follow of a running capture
// prints what each look finds, keeps a line open across looks (no label
// repeated, no newline added), and ends the last line when the capture
// ends.
func TestFollowInterleavedGrows(t *testing.T) {
	d, c := newTestCapture(t)
	a, err := c.Arrival(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	write := func(s, text string) {
		writeAll(c.Stream(s), []byte(text), len(text))
		a.Writer(s).Write([]byte(text))
	}
	write(store.Stdout, "par")
	e, err := d.Entry(c.ID())
	if err != nil || !e.Running {
		t.Fatalf("entry %+v, %v", e, err)
	}
	pr, pw := io.Pipe()
	type result struct {
		st  Status
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := Read(pw, d, e, Query{Interleaved: true, Follow: true, Limit: 1000})
		pw.Close()
		done <- result{st, err}
	}()
	got := make([]byte, len("stdout| par"))
	if _, err := io.ReadFull(pr, got); err != nil || string(got) != "stdout| par" {
		t.Fatalf("first look: %q, %v", got, err)
	}
	write(store.Stdout, "tial\n")
	write(store.Stderr, "oops")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	publish(t, c)
	rest, _ := io.ReadAll(pr)
	r := <-done
	if want := "tial\nstderr| oops\n"; r.err != nil || string(rest) != want || r.st.NextOffset != 12 || r.st.Truncated || !r.st.Final {
		t.Errorf("rest %q, %+v, %v; want %q", rest, r.st, r.err, want)
	}
}
