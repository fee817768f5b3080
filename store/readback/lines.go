package readback

// Line ranges over a stream file (SPEC §8 `capwrap read --lines A:B`),
// found by scanning in fixed blocks: forward from the start for positive
// line numbers, backward from the end for negative ones. Memory is one
// block whatever the file size.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// scanBlock is the size in bytes of the blocks the line scanners read.
const scanBlock = 64 << 10

// LineRange is a range of lines, as `capwrap read --lines A:B` gives it
// (SPEC §8): line numbers, 1-based and inclusive; a negative number counts
// from the end (-1 is the last line); 0 means "not given" (A: from the
// first line, B: to the last). A final newline ends the last line, it does
// not start another.
type LineRange struct {
	A, B int64
}

// ParseLineRange parses "A:B", "A:", ":B" or "N" (the one line N). A and B
// are non-zero integers of magnitude under 2^62; negative ones count from
// the end. The error, for the user as it is, says
// `invalid --lines "S": ...`: the text is not one of these forms, or both
// numbers have the same sign and B comes before A.
func ParseLineRange(s string) (LineRange, error) {
	bad := func() (LineRange, error) {
		return LineRange{}, fmt.Errorf("invalid --lines %q: want A:B, A:, :B or N (1-based, inclusive; negative counts from the end)", s)
	}
	num := func(t string) (int64, bool) {
		if t == "" {
			return 0, true
		}
		n, err := strconv.ParseInt(t, 10, 64)
		return n, err == nil && n != 0 && n > -(1<<62) && n < 1<<62
	}
	a, b, colon := strings.Cut(strings.TrimSpace(s), ":")
	if !colon {
		n, ok := num(a)
		if !ok || n == 0 {
			return bad()
		}
		return LineRange{n, n}, nil
	}
	if a == "" && b == "" {
		return bad()
	}
	na, okA := num(a)
	nb, okB := num(b)
	if !okA || !okB {
		return bad()
	}
	if na != 0 && nb != 0 && (na > 0) == (nb > 0) && na > nb {
		return LineRange{}, fmt.Errorf("invalid --lines %q: the range ends before it starts", s)
	}
	return LineRange{na, nb}, nil
}

// readBlock fills b from r at off; a file shorter than expected (it was
// truncated meanwhile) is io.ErrUnexpectedEOF.
func readBlock(r io.ReaderAt, b []byte, off int64) error {
	k, err := r.ReadAt(b, off)
	if k < len(b) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// scanForward returns the offset just after the count-th newline at or
// after from, reading r in blocks up to size; when there are fewer
// newlines it returns size and how many it found. buf is the block buffer.
func scanForward(r io.ReaderAt, from, size, count int64, buf []byte) (pos, found int64, err error) {
	pos = from
	for found < count && pos < size {
		n := min(int64(len(buf)), size-pos)
		if err := readBlock(r, buf[:n], pos); err != nil {
			return pos, found, err
		}
		b := buf[:n]
		for found < count {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				b = b[:0] // no more newlines: the whole block is passed
				break
			}
			found++
			b = b[i+1:]
		}
		pos += n - int64(len(b))
	}
	if found < count {
		pos = size
	}
	return pos, found, nil
}

// scanBackward returns the offset just after the count-th newline before
// end and at or after floor, scanning backward from end in blocks; when
// there are fewer it returns floor and how many it found.
func scanBackward(r io.ReaderAt, floor, end, count int64, buf []byte) (pos, found int64, err error) {
	pos = end
	if count <= 0 {
		return end, 0, nil
	}
	for found < count && pos > floor {
		n := min(int64(len(buf)), pos-floor)
		start := pos - n
		if err := readBlock(r, buf[:n], start); err != nil {
			return pos, found, err
		}
		b := buf[:n]
		for found < count {
			i := bytes.LastIndexByte(b, '\n')
			if i < 0 {
				break
			}
			found++
			b = b[:i]
			if found == count {
				return start + int64(i) + 1, found, nil
			}
		}
		pos = start
	}
	return floor, found, nil
}

// lastLineEnd is where the last line's content ends for backward counting:
// a final newline terminates the last line, it does not start a new one.
func lastLineEnd(r io.ReaderAt, size int64) (int64, error) {
	if size == 0 {
		return 0, nil
	}
	var b [1]byte
	if _, err := r.ReadAt(b[:], size-1); err != nil {
		return 0, err
	}
	if b[0] == '\n' {
		return size - 1, nil
	}
	return size, nil
}

// lineStart is the offset of the first byte of line n (1-based; negative
// from the end) in r's first size bytes; size when line n is past the end,
// 0 when a negative n reaches before the first line.
func lineStart(r io.ReaderAt, size, n int64, buf []byte) (int64, error) {
	switch {
	case n == 1 || n == 0:
		return 0, nil
	case n > 1:
		pos, _, err := scanForward(r, 0, size, n-1, buf)
		return pos, err
	}
	end, err := lastLineEnd(r, size)
	if err != nil {
		return 0, err
	}
	pos, _, err := scanBackward(r, 0, end, -n, buf)
	return pos, err
}

// lineEnd is the offset just after line n (its newline included), or
// size when line n is the last or past the end.
func lineEnd(r io.ReaderAt, size, n int64, buf []byte) (int64, error) {
	switch {
	case n == 0 || n == -1:
		return size, nil
	case n > 0:
		pos, _, err := scanForward(r, 0, size, n, buf)
		return pos, err
	}
	return lineStart(r, size, n+1, buf)
}

// resolve returns the byte range [lo, hi) of the lines in lr within r's
// first size bytes; lo == hi when the range holds no line.
func (lr LineRange) resolve(r io.ReaderAt, size int64, buf []byte) (lo, hi int64, err error) {
	if lo, err = lineStart(r, size, lr.A, buf); err != nil {
		return 0, 0, err
	}
	if lr.A > 0 && lr.B > 0 {
		// Continue from line A instead of counting from the start again.
		if lr.B < lr.A {
			return lo, lo, nil
		}
		if hi, _, err = scanForward(r, lo, size, lr.B-lr.A+1, buf); err != nil {
			return 0, 0, err
		}
		return lo, hi, nil
	}
	if hi, err = lineEnd(r, size, lr.B, buf); err != nil {
		return 0, 0, err
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi, nil
}

// countLines returns the number of newlines in r's bytes [0, end): the
// line number of offset end is that plus one.
func countLines(r io.ReaderAt, end int64, buf []byte) (int64, error) {
	var n, pos int64
	for pos < end {
		k := min(int64(len(buf)), end-pos)
		got, err := r.ReadAt(buf[:k], pos)
		n += int64(bytes.Count(buf[:got], []byte{'\n'}))
		if int64(got) < k {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return n, err
		}
		pos += k
	}
	return n, nil
}
