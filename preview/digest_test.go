package preview

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLooksLikeError: the forms of SPEC §5's error lines, and lines that
// only mention an error.
func TestLooksLikeError(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"src/main.c:12:5: error: 'x' undeclared (first use in this function)", true},
		{"main.go:7:2: error: undefined: foo", true},
		{"lib.c:3: fatal error: stdio.h: No such file or directory", true},
		{"error[E0425]: cannot find value `x` in this scope", true},
		{"FAILED tests/test_api.py::test_login - AssertionError: 401 != 200", true},
		{"ERROR tests/test_db.py - ModuleNotFoundError: No module named 'psycopg'", true},
		{"Traceback (most recent call last):", true},
		{"panic: runtime error: index out of range [3] with length 3", true},
		{"ValueError: invalid literal for int() with base 10: 'x'", true},
		{"    raise TypeError: bad operand", true},
		{"Error: Cannot find module 'express'", true},
		{"fatal: not a git repository (or any of the parent directories): .git", true},
		{"npm error: code ERESOLVE", true},
		{"error: linker `cc` not found", true},
		{"2026-12-01 10:00:00 ERROR connection refused", true},
		{"compiling error_handler.c", false},
		{"cc -c -o errors.o errors.c", false},
		{"warning: unused variable 'x'", false},
		{"test_error_paths PASSED", false},
		{"0 errors, 2 warnings", false},
		{"\x1b[01;31m\x1b[Kerror:\x1b[m\x1b[K linker failed", true}, // gcc's colours
		{"", false},
	} {
		if got := looksLikeError([]byte(tc.line)); got != tc.want {
			t.Errorf("looksLikeError(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// TestScanErrors: the first DigestLines error lines with their numbers,
// all of them counted; long lines judged by their start and counted once;
// a "\r" frame and escapes shown as display text, cut to DigestLineChars
// characters; the byte limit makes the count a lower bound.
func TestScanErrors(t *testing.T) {
	var in strings.Builder
	for i := 1; i <= 100; i++ {
		switch {
		case i%10 == 0:
			fmt.Fprintf(&in, "src/f%d.c:%d:1: error: bad thing %d\n", i, i, i)
		case i == 55:
			in.WriteString("x.go:1: error: " + strings.Repeat("é", 300) + "\n")
		case i == 77:
			in.WriteString(strings.Repeat("y", 70000) + " FAILED\n") // judged by its start: no
		case i == 78:
			in.WriteString("FAILED " + strings.Repeat("z", 70000) + "\n")
		default:
			fmt.Fprintf(&in, "ok line %d\n", i)
		}
	}
	d, err := ScanErrors(strings.NewReader(in.String()), 40, 40+int64(in.Len()), 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.Count != 12 || d.Partial {
		t.Errorf("count %d partial %v, want 12 false", d.Count, d.Partial)
	}
	var lines []int64
	for _, l := range d.Lines {
		lines = append(lines, l.Line)
	}
	if fmt.Sprint(lines) != "[10 20 30 40 50]" {
		t.Errorf("lines %v, want [10 20 30 40 50]", lines)
	}
	if d.Lines[0].Text != "src/f10.c:10:1: error: bad thing 10" {
		t.Errorf("text %q", d.Lines[0].Text)
	}

	long, err := ScanErrors(strings.NewReader("a\nx.go:1: error: "+strings.Repeat("é", 300)+"\n"), 0, 1000, 7)
	if err != nil || len(long.Lines) != 1 || long.Lines[0].Line != 8 {
		t.Fatalf("long line: %+v %v", long, err)
	}
	if txt := long.Lines[0].Text; utf8.RuneCountInString(txt) != DigestLineChars+1 || !strings.HasSuffix(txt, "…") || !utf8.ValidString(txt) {
		t.Errorf("a long line's text: %d characters, %q…", utf8.RuneCountInString(txt), txt[:20])
	}

	shown, _ := ScanErrors(strings.NewReader("\x1b[31merror: red\x1b[0m\r\n10% FAILED\r100% FAILED\n"), 0, 100, 1)
	if len(shown.Lines) != 2 || shown.Lines[0].Text != "error: red" || shown.Lines[1].Text != "100% FAILED" {
		t.Errorf("display text: %+v", shown.Lines)
	}

	big := strings.Repeat("FAILED x\n", 2000)
	p, _ := scanErrors(strings.NewReader(big), 0, int64(len(big)), 1, 9000)
	if !p.Partial || p.Count != 1000 {
		t.Errorf("past the scan limit: count %d partial %v, want 1000 true", p.Count, p.Partial)
	}

	_, err = ScanErrors(iotestErr{}, 0, 100, 1)
	if err == nil || err.Error() != "disk gone" {
		t.Errorf("a read error: %v", err)
	}
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errors.New("disk gone") }

// TestRenderDigest: the digest follows the marker, inside the ceiling;
// one made for another range, or without lines, prints nothing.
func TestRenderDigest(t *testing.T) {
	var in strings.Builder
	for i := 1; i <= 5000; i++ {
		if i == 2500 {
			in.WriteString("src/a.c:3:1: error: expected ';'\n")
			continue
		}
		fmt.Fprintf(&in, "compiling unit %05d with flags -O2 -Wall\n", i)
	}
	data := in.String()
	st := Stream{Keeper: keeperOf(8000, data), ReadCmd: "capwrap read ID"}
	opt := Options{Failed: true, MaxChars: 10000}
	_, info, _ := Render(st, Stream{}, opt)
	if info.State != StateTruncated || info.OmittedLine < 2 || info.OmittedFrom <= 0 {
		t.Fatalf("info %+v", info)
	}
	d, err := ScanErrors(strings.NewReader(data[info.OmittedFrom:]), info.OmittedFrom, info.OmittedFrom+info.OmittedBytes, info.OmittedLine)
	if err != nil || d.Count != 1 {
		t.Fatalf("digest %+v %v", d, err)
	}
	st.Digest = &d
	text, _, _ := Render(st, Stream{}, opt)
	want := "… capwrap: 1 line of them looks like an error:\n2500:src/a.c:3:1: error: expected ';'\n"
	marker := bytes.Index(text, []byte(" of stdout omitted; "))
	if marker < 0 || !bytes.Contains(text[marker:], []byte(" …\n"+want)) {
		t.Errorf("no digest right after the marker:\n%s", text)
	}
	if n := utf8.RuneCount(text); n > opt.MaxChars {
		t.Errorf("%d characters, over %d", n, opt.MaxChars)
	}
	for _, other := range []*Digest{
		{From: 0, To: d.To, Lines: d.Lines, Count: 1}, // a range the preview shows part of
		{From: d.From, To: d.To, Count: 3},            // no lines
	} {
		st.Digest = other
		if text, _, _ := Render(st, Stream{}, opt); bytes.Contains(text, []byte("look like error")) || bytes.Contains(text, []byte("looks like an error")) {
			t.Errorf("digest %+v printed:\n%s", other, text)
		}
	}
	many := Digest{From: d.From, To: d.To, Count: 40, Partial: true, Lines: []DigestLine{{2500, "a"}, {2600, "b"}}}
	st.Digest = &many
	text, _, _ = Render(st, Stream{}, opt)
	if !bytes.Contains(text, []byte("… capwrap: at least 40 lines of them look like errors; the first 2:\n2500:a\n2600:b\n")) {
		t.Errorf("a partial digest:\n%s", text)
	}
}

// FuzzScanErrors: whatever the input and range, the digest holds at most
// DigestLines lines, counts at least those, numbers them in increasing
// order from firstLine, and shows valid display text of at most
// DigestLineChars characters (and "…").
func FuzzScanErrors(f *testing.F) {
	f.Add([]byte("a\nerror: b\nFAILED c\r\n\x1b[1mpanic: d\n"), int64(1))
	f.Add([]byte("Traceback (most recent call last):\n\xff\xfeValueError: \x00\n"), int64(100))
	f.Add(bytes.Repeat([]byte("ERROR x\n"), 10), int64(5))
	f.Fuzz(func(t *testing.T, in []byte, firstLine int64) {
		if firstLine < 1 || firstLine > 1<<40 {
			return
		}
		d, err := ScanErrors(bytes.NewReader(in), 0, int64(len(in)), firstLine)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Lines) > DigestLines || d.Count < int64(len(d.Lines)) || d.Partial {
			t.Fatalf("digest %+v", d)
		}
		prev := firstLine - 1
		for _, l := range d.Lines {
			if l.Line <= prev || l.Line > firstLine+int64(bytes.Count(in, []byte("\n"))) {
				t.Fatalf("line numbers %+v", d.Lines)
			}
			prev = l.Line
			if !utf8.ValidString(l.Text) || utf8.RuneCountInString(strings.TrimSuffix(l.Text, "…")) > DigestLineChars || strings.ContainsAny(l.Text, "\n\r\x1b") {
				t.Fatalf("text %q", l.Text)
			}
		}
	})
}
