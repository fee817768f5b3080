package preview

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func keeperOf(maxChars int, s string) *Keeper {
	k := NewKeeper(maxChars)
	k.Write([]byte(s))
	return k
}

const markerPrefix = "… capwrap: "

// splitMarker splits one section's text at its marker line.
func splitMarker(t *testing.T, text string) (head, marker, tail string) {
	t.Helper()
	i := strings.Index(text, markerPrefix)
	if i < 0 {
		t.Fatalf("no marker in %q", abbrev(text))
	}
	if i > 0 && text[i-1] != '\n' {
		t.Fatalf("marker does not start a line")
	}
	j := strings.IndexByte(text[i:], '\n')
	if strings.Contains(text[i+j+1:], markerPrefix) {
		t.Fatalf("more than one marker")
	}
	return text[:i], text[i : i+j+1], text[i+j+1:]
}

func abbrev(s string) string {
	if len(s) > 300 {
		return s[:150] + " ... " + s[len(s)-150:]
	}
	return s
}

var (
	linesRE  = regexp.MustCompile("`[^`]* --lines (\\d+):(\\d+)` (?:prints them …|reads them 9,000 bytes at a time; add `--grep REGEX` to it to find lines in them …)\n$")
	offsetRE = regexp.MustCompile("^… capwrap: ([0-9,]+) bytes .*`[^`]* --offset (\\d+)(?: --limit (\\d+)` prints them …|`( reads them 9,000 bytes at a time)(?:; add `--grep REGEX` to it to find lines from there)? …)\n$")
)

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRenderCompact(t *testing.T) {
	text, out, errInfo := Render(Stream{Keeper: keeperOf(8000, "hello world 123456\n")}, Stream{Keeper: NewKeeper(2000)}, Options{})
	if string(text) != "hello world 123456\n" {
		t.Errorf("text = %q", text)
	}
	if out != (Info{State: "complete", ShownBytes: 19}) {
		t.Errorf("stdout info = %+v", out)
	}
	if errInfo != (Info{State: "complete"}) {
		t.Errorf("stderr info = %+v", errInfo)
	}
}

func TestRenderSmall(t *testing.T) {
	tests := []struct {
		name           string
		stdout, stderr string
		nilKeepers     bool
		want           string
	}{
		{"nothing", "", "", false, ""},
		{"nil keepers", "", "", true, ""},
		{"partial last line", "abc", "", false, "abc\n"},
		{"stdout and stderr", "out\n", "warning: x\n", false, "--- stdout (4 bytes) ---\nout\n--- stderr (11 bytes) ---\nwarning: x\n"},
		{"stderr only", "", "boom", false, "--- stderr (4 bytes) ---\nboom\n"},
		{"one byte", "", "\n", false, "--- stderr (1 byte) ---\n\n"},
		{"ansi and progress", "\x1b[32mok\x1b[0m 1%\r50%\r100%\n", "", false, "100%\n"},
		{"only escapes", "\x1b[0m", "", false, ""},
		{"big numbers", "", strings.Repeat("a\n", 600), false, "--- stderr (1,200 bytes) ---\n" + strings.Repeat("a\n", 600)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			so, se := Stream{Keeper: keeperOf(8000, tt.stdout)}, Stream{Keeper: keeperOf(2000, tt.stderr)}
			if tt.nilKeepers {
				so.Keeper, se.Keeper = nil, nil
			}
			text, out, errInfo := Render(so, se, Options{})
			if string(text) != tt.want {
				t.Errorf("text = %q, want %q", text, tt.want)
			}
			if out.State != "complete" || errInfo.State != "complete" {
				t.Errorf("states %q %q", out.State, errInfo.State)
			}
			if want := int64(len(Sanitize([]byte(tt.stdout)))); out.ShownBytes != want {
				t.Errorf("stdout ShownBytes = %d, want %d", out.ShownBytes, want)
			}
		})
	}
}

// numberedLines returns n lines of varying length and their concatenation.
func numberedLines(n int) ([]string, string) {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("tests/test_api.py::test_%d PASSED %s\n", i+1, strings.Repeat("=", i%37))
	}
	return lines, strings.Join(lines, "")
}

func TestRenderLargeLineCut(t *testing.T) {
	lines, in := numberedLines(20000)
	st := Stream{Keeper: keeperOf(8000, in), Name: "stdout", File: "tool-outputs/ID/stdout.log", ReadCmd: "capwrap read ID"}
	text, out, _ := Render(st, Stream{}, Options{})
	head, marker, tail := splitMarker(t, string(text))
	m := linesRE.FindStringSubmatch(marker)
	if m == nil {
		t.Fatalf("marker without --lines: %q", marker)
	}
	a, b := atoi(t, m[1]), atoi(t, m[2])
	omitted := strings.Join(lines[a-1:b], "")
	if head != strings.Join(lines[:a-1], "") || tail != strings.Join(lines[b:], "") {
		t.Errorf("head/tail are not lines 1:%d and %d:", a-1, b+1)
	}
	if head+omitted+tail != in {
		t.Errorf("head + lines %d:%d + tail do not reconstruct the input", a, b)
	}
	if out.OmittedBytes != int64(len(omitted)) || out.OmittedLines != int64(b-a+1) {
		t.Errorf("info %+v, omitted %d bytes %d lines", out, len(omitted), b-a+1)
	}
	if out.State != "truncated" || out.ShownBytes != int64(len(head)+len(tail)) {
		t.Errorf("info %+v, shown %d", out, len(head)+len(tail))
	}
	if c := utf8.RuneCountInString(head); c > 2000 || c < 1500 {
		t.Errorf("head has %d chars", c)
	}
	if c := utf8.RuneCountInString(head + tail); c > 8000 || c < 7000 {
		t.Errorf("head+tail have %d chars", c)
	}
	wantMarker := fmt.Sprintf("… capwrap: %s (%s) of stdout omitted; file tool-outputs/ID/stdout.log; `capwrap read ID --lines %d:%d` reads them 9,000 bytes at a time; add `--grep REGEX` to it to find lines in them …\n",
		appendCount(nil, int64(len(omitted)), "byte", "bytes"), appendCount(nil, int64(b-a+1), "line", "lines"), a, b)
	if marker != wantMarker {
		t.Errorf("marker = %q\nwant %q", marker, wantMarker)
	}
}

// checkOffsetCut checks a section cut on code points: head and tail are the
// input's bytes before --offset and after --offset+--limit.
func checkOffsetCut(t *testing.T, text, in string, info Info) (head, tail string) {
	t.Helper()
	head, marker, tail := splitMarker(t, text)
	m := offsetRE.FindStringSubmatch(marker)
	if m == nil {
		t.Fatalf("marker without --offset: %q", marker)
	}
	// --limit M only when M fits in one read; else the count of the marker.
	off, lim := atoi(t, m[2]), atoi(t, strings.ReplaceAll(m[1], ",", ""))
	if m[3] != "" && atoi(t, m[3]) != lim {
		t.Errorf("--limit %s for %d bytes omitted", m[3], lim)
	}
	if (m[3] != "") != (lim <= DefaultReadLimit) {
		t.Errorf("%d bytes omitted, marker %q", lim, marker)
	}
	if strings.Contains(marker, "--grep") != (m[4] != "" && strings.Contains(in[off:off+lim], "\n")) {
		t.Errorf("--grep hint for %q", marker)
	}
	if !strings.HasPrefix(in, strings.TrimSuffix(head, "\n")) || len(strings.TrimSuffix(head, "\n")) != off {
		t.Errorf("head is not input[:%d]", off)
	}
	wantTail := in[off+lim:]
	if !strings.HasSuffix(wantTail, "\n") {
		wantTail += "\n"
	}
	if tail != wantTail {
		t.Errorf("tail is not input[%d:]: %q", off+lim, abbrev(tail))
	}
	if info.OmittedBytes != int64(lim) || info.OmittedLines != int64(strings.Count(in[off:off+lim], "\n")) {
		t.Errorf("info %+v, limit %d", info, lim)
	}
	if strings.ContainsRune(text, utf8.RuneError) {
		t.Errorf("U+FFFD in the preview of valid input")
	}
	return head, tail
}

func TestRenderCodePointCut(t *testing.T) {
	// Lines of 3000 characters: no newline within the last quarter of the head.
	var sb strings.Builder
	for i := range 50 {
		sb.WriteString(strings.Repeat(string(rune('a'+i%26)), 2999) + "\n")
	}
	in := sb.String()
	text, out, _ := Render(Stream{Keeper: keeperOf(8000, in), ReadCmd: "capwrap read ID"}, Stream{}, Options{})
	head, tail := checkOffsetCut(t, string(text), in, out)
	if c := utf8.RuneCountInString(head); c != 2000+1 { // plus the newline before the marker
		t.Errorf("head has %d chars", c)
	}
	if c := utf8.RuneCountInString(tail); c != 6000 {
		t.Errorf("tail has %d chars", c)
	}
}

func TestRenderHugeSingleLine(t *testing.T) {
	in := strings.Repeat("0123456789abcdef", 2<<20/16) // 2 MiB, no newline
	k := NewKeeper(8000)
	for p := []byte(in); len(p) > 0; p = p[min(len(p), 65536):] {
		k.Write(p[:min(len(p), 65536)])
	}
	if got := cap(k.head) + cap(k.ring); got > 5*8000+1025 {
		t.Errorf("keeper holds %d bytes", got)
	}
	text, out, _ := Render(Stream{Keeper: k, ReadCmd: "capwrap read ID"}, Stream{}, Options{})
	head, tail := checkOffsetCut(t, string(text), in, out)
	if c := utf8.RuneCountInString(head) + utf8.RuneCountInString(tail); c != 8000+2 {
		t.Errorf("shown %d chars", c)
	}
	if !strings.Contains(string(text), "(within one line)") {
		t.Errorf("marker: %q", text)
	}
	if out.OmittedLines != 0 || out.OmittedBytes != int64(len(in)-8000) {
		t.Errorf("info %+v", out)
	}
}

func TestRenderWideChars(t *testing.T) {
	in := strings.Repeat("€", 100000) + "\n" // 300,001 bytes
	for _, budget := range []int{8000, 7999, 8001, 8002, 100, 1001, 4, 3} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			text, out, _ := Render(Stream{Keeper: keeperOf(budget, in), ReadCmd: "r"}, Stream{}, Options{StdoutChars: budget, MaxBytes: -1})
			head, tail := checkOffsetCut(t, string(text), in, out)
			head = strings.TrimSuffix(head, "\n")                      // the line end before the marker
			if c := utf8.RuneCountInString(head + tail); c != budget { // the final newline counts
				t.Errorf("shown %d chars", c)
			}
		})
	}
	// The keeper's raw boundaries split sequences in every possible way.
	for shift := range 3 {
		in := strings.Repeat("x", shift) + strings.Repeat("日本語", 40000)
		text, out, _ := Render(Stream{Keeper: keeperOf(8000, in), ReadCmd: "r"}, Stream{}, Options{MaxBytes: -1})
		checkOffsetCut(t, string(text), in, out)
	}
}

func TestRenderEscapesAtKeeperBoundaries(t *testing.T) {
	// One long line of coloured characters: the tail ring starts inside an
	// escape sequence for some lengths; no remnant may show.
	unit := "\x1b[38;5;208mX\x1b[0m"
	for extra := range len(unit) {
		in := strings.Repeat(unit, 20000) + unit[:extra]
		text, _, _ := Render(Stream{Keeper: keeperOf(800, in)}, Stream{}, Options{StdoutChars: 800})
		body := strings.ReplaceAll(string(text), "… capwrap:", "")
		// A lone ESC at the very end is shown escaped; a remnant would
		// show its parameters.
		if strings.ContainsAny(body, "[;\x1b") {
			t.Errorf("extra %d: escape remnant in %q", extra, abbrev(string(text)))
		}
	}
}

func TestRenderFailureTransfer(t *testing.T) {
	_, errIn := numberedLines(300) // ~16 KB of stderr
	for _, failed := range []bool{false, true} {
		so := Stream{Keeper: keeperOf(8000, "ok\n")}
		se := Stream{Keeper: keeperOf(10000, errIn), ReadCmd: "r"}
		text, out, errInfo := Render(so, se, Options{Failed: failed})
		if out.State != "complete" {
			t.Errorf("stdout %+v", out)
		}
		_, body, _ := strings.Cut(string(text), "--- stderr (")
		_, body, _ = strings.Cut(body, "\n")
		if !failed {
			if errInfo.State != "truncated" {
				t.Fatalf("success: stderr %+v", errInfo)
			}
			h, _, tl := splitMarker(t, body)
			if c := utf8.RuneCountInString(h + tl); c > 2000 || c < 1500 {
				t.Errorf("success: stderr shows %d chars", c)
			}
			continue
		}
		// 2000 + 8000 - 3 characters: the whole 16 KB does not fit either,
		// but many more characters are shown.
		if errInfo.State != "truncated" {
			t.Fatalf("failure: stderr %+v", errInfo)
		}
		h, _, tl := splitMarker(t, body)
		if c := utf8.RuneCountInString(h + tl); c > 9997 || c < 9000 {
			t.Errorf("failure: stderr shows %d chars", c)
		}
	}
	// A small stderr on failure with an empty stdout is shown whole even
	// beyond its own budget.
	_, errIn = numberedLines(100) // ~5 KB
	_, _, errInfo := Render(Stream{Keeper: NewKeeper(8000)}, Stream{Keeper: keeperOf(10000, errIn)}, Options{Failed: true})
	if errInfo.State != "complete" {
		t.Errorf("failure, empty stdout: stderr %+v", errInfo)
	}
}

func TestRenderMaxBytes(t *testing.T) {
	outIn := strings.Repeat("日本語のテキスト\n", 5000) // 3-byte chars
	errIn := strings.Repeat("エラーが発生しました\n", 5000)
	for _, failed := range []bool{false, true} {
		so := Stream{Keeper: keeperOf(8000, outIn)}
		se := Stream{Keeper: keeperOf(10000, errIn)}
		// Unlimited, to know what each would show.
		_, o0, e0 := Render(so, se, Options{Failed: failed, MaxBytes: -1})
		limit := int(o0.ShownBytes+e0.ShownBytes) - 3000
		text, o, e := Render(so, se, Options{Failed: failed, MaxBytes: limit})
		if o.ShownBytes+e.ShownBytes > int64(limit) {
			t.Errorf("failed=%v: shown %d+%d > %d", failed, o.ShownBytes, e.ShownBytes, limit)
		}
		// Room for headers and markers is their exact size: the lines
		// shown fill the ceiling to within a line of each cut.
		if len(text) > limit || len(text) < limit-2*len("エラーが発生しました\n") {
			t.Errorf("failed=%v: printed %d bytes with headers and markers, ceiling %d", failed, len(text), limit)
		}
		cut, kept := o, e
		cut0, kept0 := o0, e0
		if !failed {
			cut, kept, cut0, kept0 = e, o, e0, o0
		}
		if kept != kept0 {
			t.Errorf("failed=%v: the stream cut second changed: %+v vs %+v", failed, kept, kept0)
		}
		if cut.ShownBytes >= cut0.ShownBytes-2500 {
			t.Errorf("failed=%v: the stream cut first shows %d of %d", failed, cut.ShownBytes, cut0.ShownBytes)
		}
		checkDisplay(t, string(text))
		// A tiny ceiling: both cut, the first to nothing.
		_, o, e = Render(so, se, Options{Failed: failed, MaxBytes: 100})
		if o.ShownBytes+e.ShownBytes > 100 {
			t.Errorf("failed=%v: shown %d+%d > 100", failed, o.ShownBytes, e.ShownBytes)
		}
	}
}

// checkLineCut checks one section cut on line boundaries: its head and tail
// are the input's lines before and after the marker's --lines A:B, and
// returns the characters they show.
func checkLineCut(t *testing.T, name, body string, lines []string) int {
	t.Helper()
	head, marker, tail := splitMarker(t, body)
	m := linesRE.FindStringSubmatch(marker)
	if m == nil {
		t.Fatalf("%s: marker without --lines: %q", name, marker)
	}
	a, b := atoi(t, m[1]), atoi(t, m[2])
	if head != strings.Join(lines[:a-1], "") || tail != strings.Join(lines[b:], "") {
		t.Errorf("%s: head/tail are not lines 1:%d and %d:", name, a-1, b+1)
	}
	return utf8.RuneCountInString(head + tail)
}

// TestRenderMaxChars: big stdout and stderr; the whole text, headers,
// markers and notes included, is at most MaxChars characters, the stream
// cut first is the one MaxBytes cuts first, and the cuts keep to the head,
// tail and line rules.
func TestRenderMaxChars(t *testing.T) {
	mk := func(n int, word string) ([]string, string) {
		lines := make([]string, n)
		for i := range lines {
			lines[i] = fmt.Sprintf("%s %d %s\n", word, i+1, strings.Repeat("テ", i%23))
		}
		return lines, strings.Join(lines, "")
	}
	outLines, outIn := mk(20000, "出力")
	errLines, errIn := mk(20000, "エラー")
	notes := []string{"capwrap: the command timed out after 10s: SIGTERM, then SIGKILL"}
	for _, failed := range []bool{false, true} {
		for _, limit := range []int{9600, 9000, 6000, 2500} {
			t.Run(fmt.Sprintf("failed=%v/%d", failed, limit), func(t *testing.T) {
				so := Stream{Keeper: keeperOf(8000, outIn), ReadCmd: "capwrap read 20261130T030612Z-k3j4h5g6x2"}
				se := Stream{Keeper: keeperOf(10000, errIn), ReadCmd: "capwrap read 20261130T030612Z-k3j4h5g6x2 --stream stderr"}
				opt := Options{Failed: failed, MaxBytes: -1, Notes: notes}
				_, o0, e0 := Render(so, se, opt)
				opt.MaxChars = limit
				text, o, e := Render(so, se, opt)
				if c := utf8.RuneCount(text); c > limit || c < limit-200 {
					t.Errorf("printed %d chars, ceiling %d", c, limit)
				}
				checkDisplay(t, string(text))
				str := string(text)
				if !strings.HasSuffix(str, "\n"+notes[0]+"\n") {
					t.Errorf("the note does not end the text")
				}
				str = strings.TrimSuffix(str, notes[0]+"\n")
				outPart, errPart, ok := strings.Cut(str, "--- stderr (")
				if !ok || !strings.HasPrefix(outPart, "--- stdout (") {
					t.Fatalf("headers: %q", abbrev(str))
				}
				_, outPart, _ = strings.Cut(outPart, "---\n")
				_, errPart, _ = strings.Cut(errPart, "---\n")
				oc := checkLineCut(t, "stdout", outPart, outLines)
				ec := checkLineCut(t, "stderr", errPart, errLines)
				if int64(oc) > o0.ShownBytes || int64(ec) > e0.ShownBytes {
					t.Errorf("more shown under a ceiling")
				}
				cut, kept, kept0 := o, e, e0
				if !failed {
					cut, kept, kept0 = e, o, o0
				}
				if cut.ShownBytes > 0 && kept != kept0 {
					t.Errorf("the stream cut second changed (%+v, was %+v) while the first shows %d bytes", kept, kept0, cut.ShownBytes)
				}
				if cut.ShownBytes == 0 && limit > 6000 {
					t.Errorf("the stream cut first shows nothing")
				}
			})
		}
	}
	// A success's small stdout is not cut for the ceiling; its stderr is.
	so := Stream{Keeper: keeperOf(8000, "ok\n")}
	se := Stream{Keeper: keeperOf(10000, errIn), ReadCmd: "r"}
	text, o, e := Render(so, se, Options{MaxChars: 1000})
	if c := utf8.RuneCount(text); c > 1000 || o.State != StateComplete || e.State != StateTruncated || !strings.HasPrefix(string(text), "--- stdout (3 bytes) ---\nok\n") {
		t.Errorf("%d chars, %+v %+v: %q", c, o, e, abbrev(string(text)))
	}
	// A failure's small stdout is not cut for the ceiling: the part of
	// stderr shown in the budget stdout left goes first.
	small := strings.Repeat("x", 70) + "\n"
	for i := 0; i < 3; i++ {
		small += small
	}
	text, o, e = Render(Stream{Keeper: keeperOf(8000, small)}, Stream{Keeper: keeperOf(10000, errIn), ReadCmd: "r"}, Options{Failed: true, MaxChars: 9600, MaxBytes: -1})
	if c := utf8.RuneCount(text); c > 9600 || c < 9400 || o.State != StateComplete || e.State != StateTruncated || !strings.HasPrefix(string(text), "--- stdout (568 bytes) ---\n"+small) {
		t.Errorf("failure, small stdout: %d chars, %+v %+v: %q", c, o, e, abbrev(string(text)))
	}
	// No ceiling: zero and negative.
	for _, mc := range []int{0, -1} {
		t1, _, _ := Render(so, se, Options{MaxChars: mc, Failed: true})
		t2, _, _ := Render(so, se, Options{Failed: true})
		if !bytes.Equal(t1, t2) {
			t.Errorf("MaxChars %d cuts", mc)
		}
	}
	// A ceiling below what the markers and notes need alone: nothing of
	// the streams is shown, the markers and notes are.
	text, o, e = Render(Stream{Keeper: keeperOf(8000, outIn), ReadCmd: "r"}, Stream{Keeper: keeperOf(10000, errIn), ReadCmd: "r"}, Options{MaxChars: 50, Notes: notes})
	if o.ShownBytes != 0 || e.ShownBytes != 0 || strings.Count(string(text), markerPrefix) != 2 || !strings.HasSuffix(string(text), notes[0]+"\n") {
		t.Errorf("tiny ceiling: %+v %+v %q", o, e, text)
	}
}

func TestRenderBinary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	noisy := make([]byte, 4096)
	for i := range noisy {
		noisy[i] = byte(0x80 + rng.IntN(128))
	}
	tests := []struct {
		name   string
		in     []byte
		binary bool
	}{
		{"short with nuls", []byte("ELF\x00\x01\x02 some text\n"), false},
		{"noise without nul", noisy, true},
		{"big binary", bytes.Repeat([]byte{0, 1, 2, 0xff}, 1<<18), true},
		{"nuls", bytes.Repeat([]byte{0}, 64), true},
		{"utf-16", []byte(strings.Repeat("e\x00r\x00r\x00o\x00r\x00\n\x00", 20)), true},
		{"31% control bytes", []byte(strings.Repeat("\x01", 31) + strings.Repeat("x", 69)), true},
		{"30% control bytes", []byte(strings.Repeat("\x01", 30) + strings.Repeat("x", 70)), false},
		{"latin-1 text", bytes.Repeat([]byte("caf\xe9 cr\xe8me br\xfbl\xe9e\n"), 100), false},
		{"one bad byte", []byte("\xff\n"), false},
		{"a nul in a long text", append(bytes.Repeat([]byte("ok\n"), 1000), "\x00\n"...), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := NewKeeper(8000)
			k.Write(tt.in)
			text, out, _ := Render(Stream{Keeper: k, File: "tool-outputs/ID/stdout.log"}, Stream{}, Options{})
			isBin := strings.Contains(string(text), "binary output, ")
			if isBin != tt.binary {
				t.Fatalf("binary = %v: %q", isBin, abbrev(string(text)))
			}
			if !tt.binary {
				return
			}
			want := fmt.Sprintf("… capwrap: binary output, %s of stdout not shown; file tool-outputs/ID/stdout.log …\n", appendCount(nil, int64(len(tt.in)), "byte", "bytes"))
			if string(text) != want {
				t.Errorf("text = %q, want %q", text, want)
			}
			if out != (Info{State: "truncated", OmittedBytes: int64(len(tt.in)), OmittedLines: int64(bytes.Count(tt.in, newline)), Altered: true}) {
				t.Errorf("info %+v", out)
			}
		})
	}
}

// TestRenderNULInText: a NUL or a few in text output are shown escaped, not
// taken as binary output that hides the error line next to them.
func TestRenderNULInText(t *testing.T) {
	tests := []struct {
		name, stderr, want string
	}{
		{"one nul before the error", "building\x00\nerror: undefined: foo\n", "building\\x00\nerror: undefined: foo\n"},
		{"nul terminated strings", "a\x00b\x00c\x00\n", "a\\x00b\\x00c\\x00\n"},
		{"a few nuls in a long log", strings.Repeat("compiling package\n", 20) + "\x00\x00\x00panic: boom\n",
			strings.Repeat("compiling package\n", 20) + "\\x00\\x00\\x00panic: boom\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			se := Stream{Keeper: keeperOf(10000, tt.stderr), File: "to/ID/stderr.log"}
			text, _, info := Render(Stream{}, se, Options{Failed: true})
			_, body, _ := strings.Cut(string(text), " ---\n")
			if body != tt.want {
				t.Errorf("stderr shown as %q, want %q", body, tt.want)
			}
			if info.State != StateComplete {
				t.Errorf("info %+v", info)
			}
		})
	}
}

// TestRenderAltered: Info.Altered tells whether the bytes shown are the
// stream's bytes as they are.
func TestRenderAltered(t *testing.T) {
	_, long := numberedLines(2000)
	tests := []struct {
		name    string
		in      string
		state   string
		altered bool
	}{
		{"plain", "hello world\n", StateComplete, false},
		{"partial last line", "no newline", StateComplete, false},
		{"tabs and utf-8", "a\tb €日𝄞\n", StateComplete, false},
		{"empty", "", StateComplete, false},
		{"carriage-return frames", "10%\r50%\r100%\n", StateComplete, true},
		{"crlf", "a\r\nb\r\n", StateComplete, true},
		{"ansi colour", "\x1b[31mred\x1b[0m\n", StateComplete, true},
		{"only escapes", "\x1b[0m", StateComplete, true},
		{"control byte", "ding\x07\n", StateComplete, true},
		{"nul", "a\x00b\n", StateComplete, true},
		{"invalid utf-8", "caf\xe9\n", StateComplete, true},
		{"binary", strings.Repeat("\x00\x01\x02\xff", 100), StateTruncated, true},
		{"truncated plain", long, StateTruncated, false},
		{"truncated, colour in the head", "\x1b[1m" + long, StateTruncated, true},
		{"truncated, colour in the tail", long + "\x1b[1mdone\n", StateTruncated, true},
		{"truncated, colour only in the omitted part", long[:len(long)/2] + "\x1b[1m" + long[len(long)/2:], StateTruncated, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, out, _ := Render(Stream{Keeper: keeperOf(8000, tt.in)}, Stream{}, Options{})
			if out.State != tt.state || out.Altered != tt.altered {
				t.Errorf("info %+v, want state %s, altered %v", out, tt.state, tt.altered)
			}
			// The same on stderr, whose Info is the third result.
			_, _, errInfo := Render(Stream{}, Stream{Keeper: keeperOf(2000, tt.in)}, Options{StderrChars: 8000})
			if errInfo.State != tt.state || errInfo.Altered != tt.altered {
				t.Errorf("stderr info %+v, want state %s, altered %v", errInfo, tt.state, tt.altered)
			}
		})
	}
}

func TestRenderMarkerWithoutFile(t *testing.T) {
	_, in := numberedLines(2000)
	text, _, _ := Render(Stream{Keeper: keeperOf(100, in)}, Stream{}, Options{StdoutChars: 100})
	_, marker, _ := splitMarker(t, string(text))
	if strings.Contains(marker, "file") || strings.Contains(marker, "`") || !strings.HasSuffix(marker, " of stdout omitted …\n") {
		t.Errorf("marker = %q", marker)
	}
}

func TestRenderWholeAfterSanitize(t *testing.T) {
	// 9000 bytes of which 1000 are escapes: 8000 characters, shown whole.
	in := strings.Repeat("\x1b[1m"+strings.Repeat("y", 31)+"\n\x1b[0m", 250)
	text, out, _ := Render(Stream{Keeper: keeperOf(8000, in)}, Stream{}, Options{})
	if out.State != "complete" || string(text) != string(Sanitize([]byte(in))) {
		t.Errorf("info %+v", out)
	}
}

func TestRenderDoesNotChangeKeeper(t *testing.T) {
	_, in := numberedLines(5000)
	k := keeperOf(8000, in)
	t1, _, _ := Render(Stream{Keeper: k}, Stream{}, Options{})
	t2, _, _ := Render(Stream{Keeper: k}, Stream{}, Options{})
	if !bytes.Equal(t1, t2) {
		t.Error("second Render differs")
	}
	checkKeeper(t, k, in)
}

// TestRenderMarkerFileShort: when the capture stopped early (capture_limit,
// a write error), the marker offers only what the file holds.
func TestRenderMarkerFileShort(t *testing.T) {
	var in strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&in, "line %05d\n", i) // 11 bytes a line
	}
	data := in.String()
	st := Stream{Keeper: keeperOf(8000, data), File: "to/ID/stdout.log", ReadCmd: "capwrap read ID"}
	text, info, _ := Render(st, Stream{}, Options{})
	full := string(text)
	if !strings.Contains(full, "`capwrap read ID --lines ") || info.State != "truncated" {
		t.Fatalf("no plain marker:\n%s", full)
	}
	tests := []struct {
		name      string
		fileBytes int64
		want      []string
		notWant   string
	}{
		{"file ends inside the omission", 110000, []string{" omitted; file to/ID/stdout.log; the capture holds only the stream's first 110,000 bytes: `capwrap read ID --lines 182:` reads the part it holds 9,000 bytes at a time; add `--grep REGEX` to it to find lines in it …"}, ""},
		{"file ends inside the omission, within one read", 10000, []string{" omitted; file to/ID/stdout.log; the capture holds only the stream's first 10,000 bytes: `capwrap read ID --lines 182:` prints the part it holds …"}, ""},
		{"file ends before the omission", 1000, []string{" omitted; file to/ID/stdout.log; the capture holds only the stream's first 1,000 bytes: they are not in it …"}, "capwrap read"},
		{"file holds nothing", 0, []string{" omitted; file to/ID/stdout.log; the capture holds none of the stream: they are not in it …"}, "first 0"},
		{"file ends after the omission", int64(len(data)) - 10, []string{" omitted; file to/ID/stdout.log; `capwrap read ID --lines 182:19455` reads them"}, "holds only"},
	}
	for _, tt := range tests {
		st.FileShort, st.FileBytes = true, tt.fileBytes
		text, _, _ := Render(st, Stream{}, Options{})
		got := string(text)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: marker lacks %q:\n%s", tt.name, w, markerLine(got))
			}
		}
		if tt.notWant != "" && strings.Contains(markerLine(got), tt.notWant) {
			t.Errorf("%s: marker has %q:\n%s", tt.name, tt.notWant, markerLine(got))
		}
		if len(text) > DefaultMaxBytes {
			t.Errorf("%s: %d bytes printed", tt.name, len(text))
		}
	}
}

// TestRenderMarkerReadLimit: the marker names the capture once, through its
// read command, is exact about the range and says "prints them" only when
// one read (Options.ReadLimit bytes) returns all of them.
func TestRenderMarkerReadLimit(t *testing.T) {
	var in strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&in, "line %05d\n", i) // 11 bytes a line
	}
	lines := in.String()
	// Lines of 3000 bytes: cuts on code points, 48 lines omitted.
	var sb strings.Builder
	for i := range 50 {
		sb.WriteString(strings.Repeat(string(rune('a'+i%26)), 2999) + "\n")
	}
	long := sb.String()
	one := strings.Repeat("0123456789abcdef", 1<<20/16) // 1 MiB, no newline

	const id = "20261130T030612Z-k3j4h5g6x2"
	cmd := "capwrap read " + id
	file := "tool-outputs/" + id + "/stdout.log"
	// The omitted ranges these inputs give with the default budgets.
	const (
		linesOmitted = 212014 // lines 182:19455
		longOmitted  = 142000 // bytes 2000:144000, 48 lines
		oneOmitted   = 1040576
	)
	tests := []struct {
		name      string
		in        string
		readLimit int64
		want      string
	}{
		{"lines, many reads", lines, 0,
			"… capwrap: 212,014 bytes (19,274 lines) of stdout omitted; file " + file + "; `" + cmd + " --lines 182:19455` reads them 9,000 bytes at a time; add `--grep REGEX` to it to find lines in them …"},
		{"lines, exactly one read", lines, linesOmitted,
			"… capwrap: 212,014 bytes (19,274 lines) of stdout omitted; file " + file + "; `" + cmd + " --lines 182:19455` prints them …"},
		{"lines, one byte more than a read", lines, linesOmitted - 1,
			"… capwrap: 212,014 bytes (19,274 lines) of stdout omitted; file " + file + "; `" + cmd + " --lines 182:19455` reads them 212,013 bytes at a time; add `--grep REGEX` to it to find lines in them …"},
		{"lines, reads of 1 MiB", lines, 1 << 20,
			"… capwrap: 212,014 bytes (19,274 lines) of stdout omitted; file " + file + "; `" + cmd + " --lines 182:19455` prints them …"},
		{"lines, reads of 100 KiB", lines, 100 << 10,
			"… capwrap: 212,014 bytes (19,274 lines) of stdout omitted; file " + file + "; `" + cmd + " --lines 182:19455` reads them 100 KiB at a time; add `--grep REGEX` to it to find lines in them …"},
		{"lines, no read limit", lines, -1,
			"… capwrap: 212,014 bytes (19,274 lines) of stdout omitted; file " + file + "; `" + cmd + " --lines 182:19455` prints them …"},
		{"offset, many reads", long, 0,
			"… capwrap: 142,000 bytes (48 lines) of stdout omitted; file " + file + "; `" + cmd + " --offset 2000` reads them 9,000 bytes at a time; add `--grep REGEX` to it to find lines from there …"},
		{"offset, one read", long, longOmitted,
			"… capwrap: 142,000 bytes (48 lines) of stdout omitted; file " + file + "; `" + cmd + " --offset 2000 --limit 142000` prints them …"},
		{"within one line, many reads", one, 0,
			"… capwrap: 1,040,576 bytes (within one line) of stdout omitted; file " + file + "; `" + cmd + " --offset 2000` reads them 9,000 bytes at a time …"},
		{"within one line, one read", one, oneOmitted,
			"… capwrap: 1,040,576 bytes (within one line) of stdout omitted; file " + file + "; `" + cmd + " --offset 2000 --limit 1040576` prints them …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Stream{Keeper: keeperOf(8000, tt.in), File: file, ReadCmd: cmd}
			text, _, _ := Render(st, Stream{}, Options{ReadLimit: tt.readLimit})
			got := markerLine(string(text))
			if got != tt.want {
				t.Errorf("marker\n%s\nwant\n%s", got, tt.want)
			}
			if strings.Count(got, id) != 2 || strings.Count(got, "stdout.log") != 1 {
				t.Errorf("the marker names the file and the capture other than once each: %s", got)
			}
		})
	}
}

// TestRenderNotes: the caller's human lines come after the sections, one
// line each, as display text, and count toward the ceiling.
func TestRenderNotes(t *testing.T) {
	timeout := "capwrap: the command timed out after 10s: SIGTERM, then SIGKILL"
	drain := "capwrap: a background process still held the output pipe; nothing after that point was read (--drain-timeout 1s)"
	tests := []struct {
		name           string
		stdout, stderr string
		notes          []string
		want           string
	}{
		{"no output", "", "", []string{timeout}, timeout + "\n"},
		{"after stdout", "out\n", "", []string{timeout, drain}, "out\n" + timeout + "\n" + drain + "\n"},
		{"after a partial last line", "out", "", []string{timeout}, "out\n" + timeout + "\n"},
		{"after stderr", "out\n", "err\n", []string{drain},
			"--- stdout (4 bytes) ---\nout\n--- stderr (4 bytes) ---\nerr\n" + drain + "\n"},
		{"sanitized", "", "", []string{"\x1b[31mcapwrap:\x1b[0m a\x00b \xff", "10%\r100% done"}, "capwrap: a\\x00b \uFFFD\n100% done\n"},
		{"cut to one line", "", "", []string{"first line\nsecond line\n", "crlf\r\nafter"}, "first line\ncrlf\n"},
		{"empty notes print nothing", "x\n", "", []string{"", "\n", "\x1b[0m", "kept"}, "x\nkept\n"},
		{"nil notes", "x\n", "", nil, "x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, _, _ := Render(Stream{Keeper: keeperOf(8000, tt.stdout)}, Stream{Keeper: keeperOf(2000, tt.stderr)}, Options{Notes: tt.notes})
			if string(text) != tt.want {
				t.Errorf("text = %q, want %q", text, tt.want)
			}
			checkDisplay(t, string(text))
		})
	}

	// Big output on both streams: the notes still come last, whole, and
	// the text with them fits the byte ceiling.
	_, in := numberedLines(20000)
	for _, failed := range []bool{false, true} {
		so := Stream{Keeper: keeperOf(8000, in), ReadCmd: "capwrap read ID"}
		se := Stream{Keeper: keeperOf(10000, in), ReadCmd: "capwrap read ID --stream stderr"}
		notes := []string{timeout, drain, strings.Repeat("n", 7000)}
		text, _, _ := Render(so, se, Options{Failed: failed, Notes: notes})
		want := timeout + "\n" + drain + "\n" + strings.Repeat("n", 7000) + "\n"
		if !strings.HasSuffix(string(text), "\n"+want) {
			t.Errorf("failed=%v: the notes do not end the text: %q", failed, abbrev(string(text)))
		}
		if len(text) > DefaultMaxBytes {
			t.Errorf("failed=%v: %d bytes printed > %d", failed, len(text), DefaultMaxBytes)
		}
		without, _, _ := Render(so, se, Options{Failed: failed})
		if len(without) <= DefaultMaxBytes-len(want) {
			t.Fatalf("failed=%v: the ceiling does not bind", failed)
		}
	}
}

func markerLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "… capwrap:") {
			return l
		}
	}
	return ""
}
