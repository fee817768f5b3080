package preview

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// writeChunked writes data to k in pieces whose sizes cycle through sizes
// (each taken modulo 97, plus 1).
func writeChunked(k *Keeper, data, sizes []byte) {
	for i := 0; len(data) > 0; i++ {
		n := len(data)
		if len(sizes) > 0 {
			n = min(n, int(sizes[i%len(sizes)])%97+1)
		}
		k.Write(data[:n])
		data = data[n:]
	}
}

// FuzzKeeper: for any input and any chunking, the keeper holds what the
// model says, the same as writing the input in one piece.
func FuzzKeeper(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), []byte{0, 1, 2}, uint8(4), uint8(5))
	f.Add(bytes.Repeat([]byte("abc\n"), 100), []byte{7}, uint8(10), uint8(3))
	f.Add([]byte{}, []byte{}, uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, data, sizes []byte, hc, tc uint8) {
		one := newKeeperBytes(int(hc)%64, int(tc)%64)
		one.Write(data)
		k := newKeeperBytes(int(hc)%64, int(tc)%64)
		writeChunked(k, data, sizes)
		checkKeeper(t, one, string(data))
		checkKeeper(t, k, string(data))
		if !bytes.Equal(one.head, k.head) || !bytes.Equal(one.tail(), k.tail()) || one.total != k.total || one.lines != k.lines || one.last != k.last {
			t.Fatal("chunked keeper differs from one-piece keeper")
		}
	})
}

// FuzzRender: for any input, chunking and budgets, the preview is display
// text within the budgets, its head and tail are exactly the sanitized input
// before and after the omitted range, and the counts are exact.
func FuzzRender(f *testing.F) {
	f.Add([]byte("hello world 123456\n"), []byte(""), uint16(0), uint16(0), int16(0), false, []byte{3}, uint8(0), false, "", int32(0), int16(0))
	f.Add([]byte("10%\r50%\r100%\n\x1b[31mred\x1b[0m\n"), []byte("warn\x00\n"), uint16(8), uint16(4), int16(-1), true, []byte{1}, uint8(20), false, "capwrap: timed out|", int32(100), int16(200))
	f.Add([]byte("€€€€\n日本語\n"), []byte("é\xff\n"), uint16(5), uint16(5), int16(30), false, []byte{2, 5}, uint8(40), true, "a\nb|\x1b[1mc", int32(-1), int16(-1))
	f.Fuzz(func(t *testing.T, outData, errData []byte, oc, ec uint16, mb int16, failed bool, sizes []byte, reps uint8, tiny bool, notes string, rl int32, mc int16) {
		// Keep each run fast: inputs grow by repetition, not by the fuzzer.
		outData = outData[:min(len(outData), 1024)]
		errData = errData[:min(len(errData), 1024)]
		outData = bytes.Repeat(outData, int(reps)%64+1)
		errData = bytes.Repeat(errData, int(reps)%16+1)
		opt := Options{StdoutChars: int(oc) % 400, StderrChars: int(ec) % 400, MaxBytes: int(mb), Failed: failed, ReadLimit: int64(rl)}
		if notes != "" {
			opt.Notes = strings.Split(notes, "|")
		}
		if opt.MaxBytes > 0 {
			opt.MaxBytes %= 3000
		}
		if mc > 0 {
			opt.MaxChars = int(mc) % 3000
		}
		mk := func(c int) *Keeper {
			if tiny {
				return newKeeperBytes(c%37, c%53)
			}
			return NewKeeper(c)
		}
		d := opt.withDefaults()
		ko, ke := mk(d.StdoutChars), mk(d.StdoutChars+d.StderrChars)
		writeChunked(ko, outData, sizes)
		writeChunked(ke, errData, sizes)
		so := Stream{Keeper: ko, Name: "stdout", File: "f/stdout.log", ReadCmd: "capwrap read X"}
		se := Stream{Keeper: ke, Name: "stderr", File: "f/stderr.log", ReadCmd: "capwrap read X --stream stderr"}
		text, oi, ei := Render(so, se, opt)

		// Chunking does not matter.
		ko1, ke1 := mk(d.StdoutChars), mk(d.StdoutChars+d.StderrChars)
		ko1.Write(outData)
		ke1.Write(errData)
		text1, _, _ := Render(Stream{Keeper: ko1, File: so.File, ReadCmd: so.ReadCmd}, Stream{Keeper: ke1, File: se.File, ReadCmd: se.ReadCmd}, opt)
		if !bytes.Equal(text, text1) {
			t.Fatalf("chunked render differs:\n%q\n%q", text, text1)
		}

		checkDisplay(t, string(text))
		noteText := appendNotes(nil, opt.Notes)
		if !bytes.HasSuffix(text, noteText) || bytes.Count(noteText, newline) > len(opt.Notes) {
			t.Fatalf("text %q does not end with the notes %q", text, noteText)
		}
		if len(outData) == 0 && len(errData) == 0 && len(text) != len(noteText) {
			t.Fatalf("text for no output: %q", text)
		}
		if len(text) > 0 && text[len(text)-1] != '\n' {
			t.Fatalf("text does not end a line: %q", text)
		}
		l := layout{ko: newKept(ko), ke: newKept(ke), so: &so, se: &se, opt: d, notes: noteText}
		secO, secE, text2 := l.plan()
		if !bytes.Equal(text, text2) {
			t.Fatalf("layout differs from Render")
		}
		freeO, freeE, ecEff := planFree(l.ko, l.ke, d)
		if c := secO.shownChars(); c > d.StdoutChars {
			t.Errorf("stdout shows %d chars > %d", c, d.StdoutChars)
		}
		if c := secE.shownChars(); c > ecEff || ecEff > d.StderrChars+d.StdoutChars || (!failed && ecEff != d.StderrChars) {
			t.Errorf("stderr shows %d chars, budget %d", c, ecEff)
		}
		if c := secO.shownChars() + secE.shownChars(); c != utf8.RuneCount(secO.head)+utf8.RuneCount(secO.tail)+utf8.RuneCount(secE.head)+utf8.RuneCount(secE.tail) {
			t.Errorf("shown chars %d miscounted", c)
		}
		// The whole text fits both ceilings, unless the headers, markers,
		// summaries and notes alone do not: then no stream text is shown.
		if n := secO.shownBytes() + secE.shownBytes(); n > 0 {
			if len(text) > d.MaxBytes {
				t.Errorf("printed %d bytes > ceiling %d", len(text), d.MaxBytes)
			}
			if c := utf8.RuneCount(text); c > d.MaxChars {
				t.Errorf("printed %d chars > ceiling %d", c, d.MaxChars)
			}
		}
		// The stream cut second is cut only once the first shows nothing;
		// on failure stderr is first cut back to its own budget (of what
		// it shows in stdout's).
		first, second, secondFree := &secO, &secE, &freeE
		if !failed {
			first, second, secondFree = &secE, &secO, &freeO
		}
		if failed {
			own := l.ke.plan(d.StderrChars, math.MaxInt)
			if secE.shownBytes() < own.shownBytes() && secO.shownBytes() > 0 {
				t.Errorf("stderr cut below its own budget (%d < %d bytes) while stdout shows %d bytes", secE.shownBytes(), own.shownBytes(), secO.shownBytes())
			}
			if !reflect.DeepEqual(secO, freeO) && secO.shownBytes() > 0 && secE.shownChars() > d.StderrChars && secE.shownBytes() > own.shownBytes() {
				t.Errorf("stdout cut while stderr shows %d chars of stdout's budget", secE.shownChars()-d.StderrChars)
			}
		} else if !reflect.DeepEqual(*second, *secondFree) && first.shownBytes() > 0 {
			t.Errorf("the stream cut second is cut while the first shows %d bytes", first.shownBytes())
		}
		// Without ceilings, the budgets alone decide.
		if d.MaxBytes == math.MaxInt && d.MaxChars == math.MaxInt && (!reflect.DeepEqual(secO, freeO) || !reflect.DeepEqual(secE, freeE)) {
			t.Errorf("cut without a ceiling")
		}
		checkSection(t, "stdout", &secO, oi, outData)
		checkSection(t, "stderr", &secE, ei, errData)
	})
}

func checkSection(t *testing.T, name string, s *section, in Info, data []byte) {
	t.Helper()
	total := int64(len(data))
	if in.OmittedBytes != 0 && in.State != "truncated" || in.State != "complete" && in.State != "truncated" {
		t.Errorf("%s: info %+v", name, in)
	}
	if s.binary {
		if in != (Info{State: "truncated", OmittedBytes: total, OmittedLines: int64(bytes.Count(data, newline)), Altered: true}) {
			t.Errorf("%s: binary info %+v", name, in)
		}
		return
	}
	if s.whole {
		if !bytes.Equal(s.head, Sanitize(data)) || in.State != "complete" || in.ShownBytes != int64(len(s.head)) {
			t.Errorf("%s: whole section is not the sanitized input", name)
		}
		if in.Altered != !bytes.Equal(s.head, data) {
			t.Errorf("%s: Altered %v, shown %q for %q", name, in.Altered, s.head, data)
		}
		return
	}
	if s.a < 0 || s.a > s.b || s.b > total {
		t.Fatalf("%s: omitted range [%d, %d) of %d", name, s.a, s.b, total)
	}
	if !bytes.Equal(s.head, Sanitize(data[:s.a])) {
		t.Errorf("%s: head %q is not Sanitize(data[:%d])", name, s.head, s.a)
	}
	if !bytes.Equal(s.tail, Sanitize(data[s.b:])) {
		t.Errorf("%s: tail %q is not Sanitize(data[%d:])", name, s.tail, s.b)
	}
	if utf8.Valid(data) && !bytes.ContainsRune(data, utf8.RuneError) && (bytes.ContainsRune(s.head, utf8.RuneError) || bytes.ContainsRune(s.tail, utf8.RuneError)) {
		t.Errorf("%s: U+FFFD shown for valid input", name)
	}
	if want := !bytes.Equal(s.head, data[:s.a]) || !bytes.Equal(s.tail, data[s.b:]); in.Altered != want {
		t.Errorf("%s: Altered %v, want %v", name, in.Altered, want)
	}
	omitted := data[s.a:s.b]
	if want := int64(bytes.Count(omitted, newline)); s.omLines != want {
		t.Errorf("%s: omitted lines %d, want %d", name, s.omLines, want)
	}
	if s.b > s.a {
		if in.State != "truncated" || in.OmittedBytes != s.b-s.a || in.OmittedLines != s.omLines || in.ShownBytes != int64(s.shownBytes()) {
			t.Errorf("%s: info %+v for range [%d, %d)", name, in, s.a, s.b)
		}
	}
	if s.lineMode {
		if !(s.a == 0 || data[s.a-1] == '\n') || !(data[s.b-1] == '\n' || s.b == total) {
			t.Fatalf("%s: line mode with cuts %d, %d not on line boundaries", name, s.a, s.b)
		}
		// Lines la..lb of the stream (1-based, inclusive) are exactly the omitted bytes.
		lines := strings.SplitAfter(string(data), "\n")
		if got := strings.Join(lines[s.la-1:s.lb], ""); got != string(omitted) {
			t.Errorf("%s: lines %d:%d are %q, omitted %q", name, s.la, s.lb, got, omitted)
		}
	}
}
