package redact

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// Speed of output full of markers (breaker, issue 27's two-stream order):
// a read that Stage holds whole, or a 64 KiB Write, may hold thousands of
// spans; the release of each run used to filter all of them, so a read
// cost the square of its spans (il2.py: 3.9 times slower two-stream than
// before the order, 100 MB in 5 min 40 s).

// manySpans is the breaker's il2.py output: keyed lines on one stream,
// the bare value on the other, in reads of the given size.
func manySpans(rounds int) (out, errs []byte) {
	a := strings.Repeat("out password=Pq7Lm2Zx9 line\n", 150)
	b := strings.Repeat("err Pq7Lm2Zx9 bare\n", 200)
	return []byte(strings.Repeat(a, rounds)), []byte(strings.Repeat(b, rounds))
}

// TestManySpans: a Stage of a whole read, and a Write, that hold tens of
// thousands of markers mask every one of them. Their speed (the release
// was quadratic in them: 52,500 markers took 6.5 to 10.9 s) is measured by
// BenchmarkTwoStreamsManyMarkers, not asserted here: a timed test fails on
// a busy machine.
func TestManySpans(t *testing.T) {
	p := mustPolicy(t, Options{})
	out, errs := manySpans(150) // 630 KB and 570 KB: 52,500 markers
	for _, c := range []struct {
		name string
		run  func(wo, we *Writer)
	}{
		{"one Stage per stream", func(wo, we *Writer) {
			wo.Stage(out)
			we.Stage(errs)
			wo.Commit()
			we.Commit()
		}},
		{"Write, one stream", func(wo, we *Writer) {
			wo.Write(out)
			wo.Write(errs)
		}},
		{"Stage then Write", func(wo, we *Writer) {
			wo.Write(out[:100])
			we.Stage(errs)
			we.Commit()
			wo.Write(out[100:])
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := NewMemory()
			var bo, be bytes.Buffer
			wo, we := p.NewSharedWriter(&bo, mem), p.NewSharedWriter(&be, mem)
			c.run(wo, we)
			wo.Close()
			we.Close()
			if got := bo.String() + be.String(); strings.Contains(got, "Pq7Lm2Zx9") {
				t.Errorf("value shown")
			}
			if n := wo.Replaced() + we.Replaced(); n != 350*150 {
				t.Errorf("%d markers, want %d", n, 350*150)
			}
		})
	}
}

// TestReleasePrefix: the release takes the spans a run covers from the
// front of the list and keeps the open ones (a PEM block still growing)
// before the rest; the output is Write's in any pieces and the reference.
func TestReleasePrefix(t *testing.T) {
	p := mustPolicy(t, Options{})
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEowIBAAKCAQEA7bq3Zx0Pq9Lm2Wv8Rt5Yk1Hs6Nj4Fd3Gc2Xb0Va\n", 4) + "-----END RSA PRIVATE KEY-----\n"
	for _, c := range []struct{ name, in, secret string }{
		{"runs back to back", strings.Repeat("password=Pq7Lm2Zx9 Pq7Lm2Zx9Pq7Lm2Zx9\n", 40), "Pq7Lm2Zx9"},
		{"repeats inside a PEM block", "password=MIIEowIBAAKCAQEA7bq3\n" + pem + "MIIEowIBAAKCAQEA7bq3 after\n", "MIIEowIBAAKCAQEA7bq3"},
		{"PEM block after many markers", strings.Repeat("token=Zq8v3LmN0pXr7TsW ok\n", 50) + pem + "Zq8v3LmN0pXr7TsW\n", "Zq8v3LmN0pXr7TsW"},
		{"value and its half", strings.Repeat("password=Pq7Lm2Zx9Pq7Lm2Zx9 x Pq7Lm2Zx9Pq7Lm2Zx9 Pq7Lm2Zx9\n", 30), "Pq7Lm2Zx9Pq7Lm2Zx9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := checkAllWays(t, p, c.in, c.secret)
			if strings.Contains(got, c.secret) {
				t.Errorf("%q shown in %q", c.secret, got)
			}
			var staged bytes.Buffer
			w := p.NewWriter(&staged)
			w.Stage([]byte(c.in))
			w.Commit()
			w.Close()
			if staged.String() != got {
				t.Errorf("Stage and Commit differ:\n got %q\nwant %q", staged.String(), got)
			}
		})
	}
}

// BenchmarkTwoStreamsManyMarkers: il2.py's output through two Writers
// sharing a Memory, staged and committed in 64 KiB reads as wrap does
// (main before the fix: ~1 MB/s; see README "## Redaction").
func BenchmarkTwoStreamsManyMarkers(b *testing.B) {
	p := benchPolicy(b)
	out, errs := manySpans(100)
	b.SetBytes(int64(len(out) + len(errs)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		mem := NewMemory()
		wo, we := p.NewSharedWriter(io.Discard, mem), p.NewSharedWriter(io.Discard, mem)
		for o := 0; o < len(out) || o < len(errs); o += 64 << 10 {
			wo.Stage(out[min(o, len(out)):min(o+64<<10, len(out))])
			we.Stage(errs[min(o, len(errs)):min(o+64<<10, len(errs))])
			wo.Commit()
			we.Commit()
		}
		wo.Close()
		we.Close()
	}
}

// BenchmarkWriterRememberedValue: one stream full of a remembered value,
// written in 64 KiB pieces.
func BenchmarkWriterRememberedValue(b *testing.B) {
	p := benchPolicy(b)
	in := []byte("password=Pq7Lm2Zx9\n" + strings.Repeat("err Pq7Lm2Zx9 bare\n", 200_000))
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w := p.NewWriter(io.Discard)
		for o := 0; o < len(in); o += 64 << 10 {
			w.Write(in[o:min(o+64<<10, len(in))])
		}
		w.Close()
	}
}

// countWrites counts the Writes it is given.
type countWrites struct {
	bytes.Buffer
	n int
}

func (c *countWrites) Write(p []byte) (int, error) {
	c.n++
	return c.Buffer.Write(p)
}

// TestReleaseOneWrite: what one Write, Commit or Close of a Writer
// releases reaches the destination in one Write, however many markers it
// holds (a Write per piece of text and per marker was a system call per
// piece behind --tee: il2.py 8.3 MB took 700,000 of them).
func TestReleaseOneWrite(t *testing.T) {
	p := mustPolicy(t, Options{})
	out, errs := manySpans(3)
	for _, c := range []struct {
		name  string
		calls int // Writes, Commits and Closes that may release bytes
		run   func(w *Writer)
	}{
		{"one Write", 2, func(w *Writer) { w.Write(out) }},
		{"Write of the bare value", 3, func(w *Writer) { w.Write(out[:100]); w.Write(errs) }},
		{"Stage and Commit", 2, func(w *Writer) { w.Stage(out); w.Commit() }},
		{"two Stages, one Commit", 2, func(w *Writer) { w.Stage(out); w.Stage(errs); w.Commit() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var dst countWrites
			w := p.NewWriter(&dst)
			c.run(w)
			w.Close()
			if dst.n > c.calls {
				t.Errorf("%d Writes to the destination for %d markers, want at most %d", dst.n, w.Replaced(), c.calls)
			}
			if strings.Contains(dst.String(), "Pq7Lm2Zx9") || w.Replaced() == 0 {
				t.Errorf("value shown or no marker (%d)", w.Replaced())
			}
			if want := redactChunks(t, p, append(append([]byte{}, out...), errs...), nil); c.name == "two Stages, one Commit" && dst.String() != string(want) {
				t.Errorf("output differs from one Write's")
			}
		})
	}
}
