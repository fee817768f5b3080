package preview

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkKeeperWrite measures the steady state of a stdout Keeper of the
// spec budget fed 64 KiB writes: it must not allocate.
func BenchmarkKeeperWrite(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; buf.Len() < 64<<10; i++ {
		fmt.Fprintf(&buf, "tests/test_api.py::test_%d PASSED \x1b[32m[ %d%%]\x1b[0m\n", i, i%100)
	}
	chunk := buf.Bytes()[:64<<10]
	k := NewKeeper(DefaultStdoutChars)
	k.Write(chunk) // fill head and ring
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		k.Write(chunk)
	}
}

// BenchmarkKeeperWriteSmall measures 512-byte writes, a typical pipe read
// of a chatty program.
func BenchmarkKeeperWriteSmall(b *testing.B) {
	chunk := bytes.Repeat([]byte("0123456789abcdef\n"), 31)[:512]
	k := NewKeeper(DefaultStdoutChars)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		k.Write(chunk)
	}
}

// BenchmarkRender renders a truncated stdout and a truncated stderr with the
// spec budgets: the work is bounded by the kept bytes, not the 10 MB written.
func BenchmarkRender(b *testing.B) {
	_, in := numberedLines(200000)
	ko, ke := NewKeeper(DefaultStdoutChars), NewKeeper(DefaultStdoutChars+DefaultStderrChars)
	ko.Write([]byte(in))
	ke.Write([]byte(in))
	b.ReportAllocs()
	for b.Loop() {
		Render(Stream{Keeper: ko, File: "f", ReadCmd: "capwrap read X"}, Stream{Keeper: ke, File: "g", ReadCmd: "capwrap read X --stream stderr"}, Options{Failed: true})
	}
}

// BenchmarkRenderMaxChars is BenchmarkRender under the character ceiling
// the caller sets (10,000 less the receipt line), which binds: the plan is
// made again with the exact room the markers leave.
func BenchmarkRenderMaxChars(b *testing.B) {
	_, in := numberedLines(200000)
	ko, ke := NewKeeper(DefaultStdoutChars), NewKeeper(DefaultStdoutChars+DefaultStderrChars)
	ko.Write([]byte(in))
	ke.Write([]byte(in))
	notes := []string{"capwrap: the command timed out after 10s: SIGTERM, then SIGKILL"}
	b.ReportAllocs()
	for b.Loop() {
		Render(Stream{Keeper: ko, File: "f", ReadCmd: "capwrap read X"}, Stream{Keeper: ke, File: "g", ReadCmd: "capwrap read X --stream stderr"}, Options{Failed: true, MaxChars: 9600, Notes: notes})
	}
}

// BenchmarkRenderCompact renders the common small success.
func BenchmarkRenderCompact(b *testing.B) {
	ko, ke := NewKeeper(DefaultStdoutChars), NewKeeper(DefaultStdoutChars+DefaultStderrChars)
	ko.Write([]byte("hello world 123456\n"))
	b.ReportAllocs()
	for b.Loop() {
		Render(Stream{Keeper: ko}, Stream{Keeper: ke}, Options{})
	}
}
