package preview

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"sync"
	"unicode/utf8"
)

// The error digest's bounds (SPEC §5: "the first few such lines (each cut
// to 200 characters) ... and how many there are").
const (
	// DigestLines is how many error lines a digest shows at most.
	DigestLines = 5
	// DigestLineChars is the most characters of one line a digest shows.
	DigestLineChars = 200
	// DigestScanBytes is the most bytes ScanErrors reads: past it the
	// count is a lower bound (Digest.Partial).
	DigestScanBytes = 64 << 20
	// digestMatchBytes is how much of a line the error patterns look at,
	// bytes: a line longer than that is an error line by its start.
	digestMatchBytes = 1024
)

// Digest is the error digest of the part of a stream a preview omits (SPEC
// §5): the first lines of it that look like errors, and how many there
// are. Render prints it after the stream's omission marker when it was made
// for a range inside the one the preview omits.
type Digest struct {
	// From and To are the stream byte range [From, To) it was made for.
	From, To int64
	// Lines are the first error lines, at most DigestLines, in order.
	Lines []DigestLine
	// Count is the number of error lines in the range (in its first
	// DigestScanBytes bytes when Partial).
	Count int64
	// Partial says the scan stopped at DigestScanBytes, before To.
	Partial bool
}

// DigestLine is one line of a Digest.
type DigestLine struct {
	// Line is the line's 1-based number in the stream.
	Line int64
	// Text is the line as display text (sanitized: see Sanitize), cut to
	// DigestLineChars characters with "…" when longer.
	Text string
}

// errorLine is what looks like an error (SPEC §5): a compiler's
// "file:line: error" (and "fatal error", rustc's "error[E0425]"), a test
// runner's FAILED or ERROR line, a Python traceback's start, a Go panic,
// "Error:" (Python's and JavaScript's "ValueError: ", "TypeError: "),
// git's and others' "fatal:" and "error:" at a line's start.
//
// Compiled at first use, not in the package's init (issue 28).
var errorLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\S+:\d+(?::\d+)?: (?:fatal )?error\b|\berror\[|\bFAILED\b|\bERROR\b|^Traceback \(most recent call last\)|\bpanic: |(?:^|\b[A-Z]\w*)Error: |(?:^|\s)(?:fatal|error): `)
})

// errorHints are the bytes one of errorLine's forms holds: a line without
// any of them is not looked at further.
var errorHints = [][]byte{[]byte("rror"), []byte("RROR"), []byte("FAILED"), []byte("Traceback"), []byte("panic: "), []byte("fatal")}

// looksLikeError reports whether line (without its newline; only its first
// digestMatchBytes bytes count) looks like an error, as display text:
// colour escapes removed, a "\r" frame by its last.
func looksLikeError(line []byte) bool {
	line = line[:min(len(line), digestMatchBytes)]
	for _, h := range errorHints {
		if bytes.Contains(line, h) {
			return errorLine().Match(Sanitize(line))
		}
	}
	return false
}

// ScanErrors makes the digest of stream bytes [from, to), which r reads
// from its start (r's first byte is the stream's byte from), whose first
// line is line number firstLine of the stream. It reads at most
// DigestScanBytes bytes. Its memory is bounded by a 64 KiB buffer, whatever
// the lines' length. The error is r's, other than io.EOF (the digest of
// what was read comes with it).
func ScanErrors(r io.Reader, from, to, firstLine int64) (Digest, error) {
	return scanErrors(r, from, to, firstLine, DigestScanBytes)
}

// scanErrors is ScanErrors reading at most most bytes.
func scanErrors(r io.Reader, from, to, firstLine, most int64) (Digest, error) {
	d := Digest{From: from, To: to}
	limit := to - from
	if limit > most {
		limit, d.Partial = most, true
	}
	br := bufio.NewReaderSize(io.LimitReader(r, limit), 64<<10)
	line := firstLine
	inLong := false // the rest of a line longer than the buffer: already judged
	for {
		seg, err := br.ReadSlice('\n')
		if len(seg) > 0 {
			complete := seg[len(seg)-1] == '\n'
			if !inLong {
				text := bytes.TrimSuffix(seg, []byte("\n"))
				if looksLikeError(text) {
					d.Count++
					if len(d.Lines) < DigestLines {
						d.Lines = append(d.Lines, DigestLine{Line: line, Text: digestText(text)})
					}
				}
			}
			inLong = !complete
			if complete {
				line++
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return d, nil
		default:
			return d, err
		}
	}
}

// digestText is line as a digest shows it: display text (sanitized; a
// "\r" frame keeps its last) of at most DigestLineChars characters, "…"
// added when cut.
func digestText(line []byte) string {
	t := Sanitize(bytes.TrimSuffix(line, []byte("\r")))
	if utf8.RuneCount(t) <= DigestLineChars {
		return string(t)
	}
	n, i := 0, 0
	for i < len(t) && n < DigestLineChars {
		_, size := utf8.DecodeRune(t[i:])
		i += size
		n++
	}
	return string(t[:i]) + "…"
}

// appendDigest appends the digest's lines after a marker:
//
//	… capwrap: 40 lines of them look like errors; the first 5:
//	2301:src/a.c:12:5: error: 'x' undeclared (first use in this function)
//
// in the form `capwrap read --grep` prints ("LINE:text").
func appendDigest(dst []byte, d *Digest) []byte {
	dst = append(dst, "… capwrap: "...)
	if d.Partial {
		dst = append(dst, "at least "...)
	}
	dst = appendCount(dst, d.Count, "line", "lines")
	if d.Count == 1 {
		dst = append(dst, " of them looks like an error"...)
	} else {
		dst = append(dst, " of them look like errors"...)
	}
	if d.Count > int64(len(d.Lines)) {
		dst = append(dst, "; the first "...)
		dst = strconv.AppendInt(dst, int64(len(d.Lines)), 10)
	}
	dst = append(dst, ":\n"...)
	for _, l := range d.Lines {
		dst = strconv.AppendInt(dst, l.Line, 10)
		dst = append(dst, ':')
		dst = append(dst, l.Text...)
		dst = append(dst, '\n')
	}
	return dst
}
