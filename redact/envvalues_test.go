package redact

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/capwrap/capwrap/redact/internal/match"
)

// envValue returns a value of n bytes that the catalogue does not mask by
// itself (letters and digits after "v_", seeded by seed): what is masked in
// the tests below is masked for being the variable's value.
func envValue(n int, seed uint64) string {
	const alpha = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = alpha[r.IntN(len(alpha))]
	}
	return string(b)
}

// envSizes are the value sizes of the tests below: one byte (a --redact-env
// value), both sides of the automaton's and the literal lookup's bounds,
// both sides of match.MaxLiteral, and values of 64 and 200 KB.
var envSizes = []int{1, 2, 5, 6, 7, 8, 9, 16, 63, 100, 1000, match.MaxLiteral - 1, match.MaxLiteral, match.MaxLiteral + 1, 5000, 64 << 10, 200 << 10}

// TestEnvValueSizes: a secret environment value of any size is masked
// where it appears whole: written at once, split across writes of every
// size, and with many other values in the policy; and the Writer agrees
// with the whole-buffer reference (issue 26: values past a few KB cost
// seconds and hundreds of MB, so they were not tested at all).
func TestEnvValueSizes(t *testing.T) {
	for _, n := range envSizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			many := 8
			if n >= 64<<10 {
				many = 3
			}
			var env, names []string
			vals := make([]string, many)
			for i := range vals {
				vals[i] = envValue(n, uint64(i))
				name := fmt.Sprintf("APP%d_SECRET", i)
				env = append(env, name+"="+vals[i])
				names = append(names, name) // a value shorter than MinEnvValue is masked when named
			}
			p := mustPolicy(t, Options{Environ: env, EnvNames: names})
			v := vals[0]
			marker := "[REDACTED:env:APP0_SECRET]"
			in := "before " + v + " after\n" + v + "\n"
			want := "before " + marker + " after\n" + marker + "\n"
			if n == 1 {
				// One byte: every occurrence of it is masked, in the words
				// around it too.
				want = strings.ReplaceAll(in, v, marker)
			}
			chunkings := [][]int{nil, {1}, {7}, {3, 4096}, {match.MaxLiteral + 1}, {65536}}
			if n > 64<<10 {
				chunkings = [][]int{nil, {13}, {3, 4096}, {match.MaxLiteral + 1}, {65536}}
			}
			for _, sizes := range chunkings {
				if got := string(redactChunks(t, p, []byte(in), sizes)); got != want {
					t.Fatalf("writes of %v: got %.200q, want %.200q", sizes, got, want)
				}
			}
			if n <= 5000 {
				if ref, _ := reference(p, []byte(in)); string(ref) != want {
					t.Fatalf("reference: got %.200q", ref)
				}
			}

			// Every value, each in its base64 form too (a value of
			// minVariant bytes or more), in one output.
			var b, w strings.Builder
			for i, v := range vals {
				enc := base64.StdEncoding.EncodeToString([]byte(v))
				fmt.Fprintf(&b, "%d: %s %s\n", i, v, enc)
				m := fmt.Sprintf("[REDACTED:env:APP%d_SECRET]", i)
				if n < minVariant {
					fmt.Fprintf(&w, "%d: %s %s\n", i, m, enc)
					continue
				}
				fmt.Fprintf(&w, "%d: %s %s\n", i, m, m)
			}
			for _, sizes := range [][]int{nil, {5}, {4099}} {
				got := string(redactChunks(t, p, []byte(b.String()), sizes))
				if n > 1 && got != w.String() {
					t.Fatalf("many values, writes of %v: got %.300q, want %.300q", sizes, got, w.String())
				}
			}
			// The reference looks for each form of each value in turn
			// (thousands of lines of base64 for a large value): only
			// for the smaller values.
			if n <= 1000 {
				got := redactChunks(t, p, []byte(b.String()), []int{5})
				if ref, _ := reference(p, []byte(b.String())); !bytes.Equal(ref, got) {
					t.Fatal("many values: the Writer and the reference differ")
				}
			}
		})
	}
}

// TestLongValuePrefix: a value longer than match.MaxLiteral is found by
// its first MaxLiteral bytes (README "Redaction"): whole, it is masked
// whole; cut short after them, as far as it goes; cut before, not at all
// (as any value cut short); two values that share their first MaxLiteral
// bytes are each masked whole.
func TestLongValuePrefix(t *testing.T) {
	v := envValue(match.MaxLiteral+2000, 1)
	u := v[:match.MaxLiteral+1000] + envValue(1000, 2) // shares v's first MaxLiteral+1000 bytes
	p := mustPolicy(t, Options{Environ: []string{"A_TOKEN=" + v, "B_TOKEN=" + u}})
	if h := p.Holdback(); h > 4097 {
		t.Errorf("Holdback() = %d, want at most 4097", h)
	}
	const ma, mb = "[REDACTED:env:A_TOKEN]", "[REDACTED:env:B_TOKEN]"
	cut := v[:match.MaxLiteral+500]
	short := v[:match.MaxLiteral-1]
	for _, c := range []struct{ in, want string }{
		{"x " + v + " y", "x " + ma + " y"},
		{"x " + u + " y", "x " + ma + " y"}, // u starts like v: one run, named after v (listed first)
		{"x " + cut + "! y", "x " + ma + "! y"},
		{"x " + short + "! y", "x " + short + "! y"},
		{v + v, ma},
		{u + "\n" + v, ma + "\n" + ma},
	} {
		for _, sizes := range [][]int{nil, {1}, {4095}, {4097, 3}} {
			got := string(redactChunks(t, p, []byte(c.in), sizes))
			if got != c.want {
				t.Errorf("writes of %v: got %.120q...%.60q, want %.120q", sizes, got, got[max(0, len(got)-60):], c.want)
			}
		}
		if ref, _ := reference(p, []byte(c.in)); string(ref) != c.want {
			t.Errorf("reference: got %.120q, want %.120q", ref, c.want)
		}
	}
}

// TestEnvValuesBounded: 64 KB of secret environment values, as one value,
// eight, or a thousand, build a policy of a few MB (issue 26: the keyword
// automaton held a dense transition row per byte of every form of every
// value, 370 MB for one value of 64 KB), which holds back at most what the
// catalogue does.
func TestEnvValuesBounded(t *testing.T) {
	for _, n := range []int{1, 8, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			opt := envValuesOptions(64<<10, n)
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			p := mustPolicy(t, opt)
			runtime.ReadMemStats(&m1)
			if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 24<<20 {
				t.Errorf("NewPolicy allocated %d MB for 64 KB of values, want at most 24", alloc>>20)
			}
			if h := p.Holdback(); h > 4096 {
				t.Errorf("Holdback() = %d, want at most 4096", h)
			}
		})
	}
}

// envValuesOptions returns the environment of n secret variables whose
// values total size bytes.
func envValuesOptions(size, n int) Options {
	var env []string
	for i := 0; i < n; i++ {
		env = append(env, fmt.Sprintf("SVC%d_TOKEN=%s", i, envValue(size/n, uint64(i))))
	}
	return Options{Environ: env}
}

// BenchmarkEnvValues measures what 64 KB of secret environment values
// cost a run that prints one line: NewPolicy, a Writer, a Write, Close
// (issue 26; before: 1.1 s and 370 MB per op for one value). Target: under
// 10 ms and 10 MiB per op.
func BenchmarkEnvValues(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("values=%d", n), func(b *testing.B) {
			opt := envValuesOptions(64<<10, n)
			line := []byte("ok: " + strings.TrimPrefix(opt.Environ[0][:40], "SVC0_TOKEN=") + "\n")
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p, err := NewPolicy(opt)
				if err != nil {
					b.Fatal(err)
				}
				w := p.NewWriter(io.Discard)
				w.Write(line)
				w.Close()
			}
		})
	}
}

// FuzzLongValue: around and inside values longer than match.MaxLiteral
// (one a prefix of another's first MaxLiteral+1000 bytes), the output is
// the same however the input is split, and equals the reference's.
func FuzzLongValue(f *testing.F) {
	f.Add([]byte("a "), uint16(0), []byte(" b"), uint8(0), []byte{1})
	f.Add([]byte(""), uint16(5000), []byte("x"), uint8(1), []byte{255, 3})
	f.Add([]byte("\n"), uint16(4095), []byte("\n"), uint8(2), []byte{7})
	f.Add([]byte("q"), uint16(4096), []byte(""), uint8(3), []byte{0, 200})
	f.Fuzz(func(t *testing.T, pre []byte, cut uint16, post []byte, which uint8, cuts []byte) {
		p, vals := longValuePolicy()
		v := vals[int(which)%len(vals)]
		k := int(cut) % (len(v) + 1)
		in := []byte(string(pre) + v[:k] + string(post) + v + string(pre) + v[k:])
		got := redactChunks(t, p, in, chunkSizes(cuts))
		if whole := redactChunks(t, p, in, nil); !bytes.Equal(got, whole) {
			t.Fatal("chunked output differs from one write")
		}
		if want, _ := reference(p, in); !bytes.Equal(got, want) {
			t.Fatalf("Writer and reference differ:\n got %.300q\nwant %.300q", got, want)
		}
		if bytes.Contains(got, []byte(v)) {
			t.Fatal("a whole value is in the output")
		}
	})
}

// longValuePolicy is FuzzLongValue's policy and the texts it plants: two
// values past match.MaxLiteral that share a prefix, a short one, the
// catalogue; and the first MaxLiteral bytes of the first value.
var longValuePolicy = sync.OnceValues(func() (*Policy, []string) {
	v := envValue(match.MaxLiteral+904, 7)
	u := v[:match.MaxLiteral+100] + envValue(300, 8)
	vals := []string{v, u, "Zq9xK2mP4w"}
	var env []string
	for i, x := range vals {
		env = append(env, fmt.Sprintf("L%d_TOKEN=%s", i, x))
	}
	p, err := NewPolicy(Options{Environ: env})
	if err != nil {
		panic(err)
	}
	return p, append(vals, v[:match.MaxLiteral])
})
