package redact

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/capwrap/capwrap/redact/internal/testlog"
)

// Issue 27, memory of masked values: every value ever masked is remembered,
// whatever its characters, within the bounds of remember.go; a remembered
// value never starts with a separator; values up to MaxRepeat bytes.

// fragments returns the pieces of v of MinRepeat bytes that out shows.
func fragments(out, v string) []string {
	var shown []string
	for i := 0; i+MinRepeat <= len(v); i++ {
		if f := v[i : i+MinRepeat]; strings.Contains(out, f) {
			shown = append(shown, f)
		}
	}
	return shown
}

// TestRememberWhateverCharacters: a value masked once (by its key) is
// masked at its later bare occurrences, whatever it is made of: digits
// and "@", digits only, a word with digits; at any place on a later line,
// inside JSON, between colour codes, and on the same line.
func TestRememberWhateverCharacters(t *testing.T) {
	p := mustPolicy(t, Options{})
	cases := []struct{ name, first, v, later string }{
		{"digits and @, issue's 12345@78", "password=%s\n", "12345@78", "x %s y\n"},
		{"digits and @, issue's 1@234567", "password=%s\n", "1@234567", "%s\n"},
		{"@ first", "PASSWORD=%s\n", "@9876543", "login with %s failed\n"},
		{"digits only", "password=%s\n", "73920518", "pin %s\n"},
		{"digits only, quoted JSON", `{"password": "%s"}` + "\n", "4815162342", `{"note":"%s"}` + "\n"},
		{"a word with digits", "db_password=%s\n", "sunshine99", "connecting as %s...\n"},
		{"words and digits", "password=%s\n", "hunter2hunter2", "echo %s\n"},
		{"after a colour code", "password=%s\n", "55512@34", "\x1b[31m%s\x1b[0m\n"},
		{"same line", "password=%s ", "12@34@5678", "then %s\n"},
		{"colon-separated", "password: '%s'\n", "2024:06:14", "at %s\n"},
		{"after many lines", "password=%s\n" + strings.Repeat("ordinary line of output\n", 300), "987@6543", "%s\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			first := fmt.Sprintf(c.first, c.v)
			later := strings.Replace(c.later, "%s", c.v, -1)
			got := checkAllWays(t, p, first+later, c.v)
			if strings.Contains(got, c.v) {
				t.Errorf("%q shown in %q", c.v, got)
			}
			// The first occurrence is masked by its key, the later one by
			// memory: two markers at least, and the rest of the later
			// line intact.
			if n := strings.Count(got, "[REDACTED:"); n < 2 {
				t.Errorf("%d markers in %q, want 2", n, got)
			}
			for _, w := range strings.Fields(strings.Replace(c.later, "%s", " ", -1)) {
				if !strings.Contains(got, w) {
					t.Errorf("%q swallowed in %q", w, got)
				}
			}
		})
	}
}

// TestRememberNearMisses: what is not remembered: placeholders (one byte
// repeated), values shorter than MinRepeat, and the separator a value
// begins with.
func TestRememberNearMisses(t *testing.T) {
	p := mustPolicy(t, Options{})
	cases := []struct{ name, first, later, wantLater string }{
		{"asterisks", "password=********\n", "|********|--------|\n", "|********|--------|\n"},
		{"x placeholder", "password=xxxxxxxx\n", "xxxxxxxxxxxx\n", "xxxxxxxxxxxx\n"},
		{"seven bytes", "password=ab@1234\n", "ab@1234 ab@12345\n", "ab@1234 ab@12345\n"},
		{"seven digits", "password=1234567\n", "line 1234567\n", "line 1234567\n"},
		{"leading =", "password: =Zq8v3LmN0pXr\n", "X=Zq8v3LmN0pXr\n", "X=[REDACTED:password]\n"},
		{"leading = in a later assignment", "password: =Wq7kLm2Pz9xB\n", "export A=Wq7kLm2Pz9xB B=1\n", "export A=[REDACTED:password] B=1\n"},
		{"leading =, digits", "password: =12345@78\n", "id=12345@78;\n", "id=[REDACTED:password];\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := checkAllWays(t, p, c.first+c.later, "")
			first := p.String(c.first)
			if got != first+c.wantLater {
				t.Errorf("got %q, want %q", got, first+c.wantLater)
			}
		})
	}
}

// randValue returns n bytes that look like a random secret.
func randValue(r *rand.Rand, n int) string {
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alpha[r.IntN(len(alpha))]
	}
	return string(b)
}

// TestRememberLongValues: values longer than 256 bytes are remembered, up
// to MaxRepeat (issue 27: "repeats of values over 256 bytes" leaked).
func TestRememberLongValues(t *testing.T) {
	p := mustPolicy(t, Options{})
	r := rand.New(rand.NewPCG(27, 1))
	for _, n := range []int{255, 257, 300, 1000, 2048, MaxRepeat - 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			v := randValue(r, n)
			in := "password=" + v + "\nthen " + v + "\nand " + v
			got := checkAllWays(t, p, in, v)
			if f := fragments(got, v); len(f) > 0 {
				t.Errorf("%d fragments shown, first %q; output %.120q", len(f), f[0], got)
			}
			if want := "password=[REDACTED:password]\nthen [REDACTED:password]\nand [REDACTED:password]"; got != want {
				t.Errorf("got %.200q, want %q", got, want)
			}
		})
	}
}

// TestRememberBytesBound: at most MemoryBytes bytes of values are
// remembered, the first ones; a shorter value that still fits is kept.
func TestRememberBytesBound(t *testing.T) {
	p := mustPolicy(t, Options{})
	r := rand.New(rand.NewPCG(27, 2))
	const n = 4000
	var in, want strings.Builder
	var vals []string
	for i := 0; i < MemoryBytes/n+2; i++ {
		v := randValue(r, n)
		vals = append(vals, v)
		in.WriteString("password=" + v + "\n")
		want.WriteString("password=[REDACTED:password]\n")
	}
	short := randValue(r, 500) // fits in what the long ones left
	in.WriteString("password=" + short + "\n")
	want.WriteString("password=[REDACTED:password]\n")
	for i, v := range vals {
		in.WriteString(v + "\n")
		if i < MemoryBytes/n {
			want.WriteString("[REDACTED:password]\n")
		} else {
			want.WriteString(v + "\n")
		}
	}
	in.WriteString(short + "\n")
	want.WriteString("[REDACTED:password]\n")
	if got := redactChunks(t, p, []byte(in.String()), []int{4096 + 7}); string(got) != want.String() {
		t.Errorf("got %d bytes, want %d; remembered %d of %d long values",
			len(got), want.Len(), strings.Count(string(got), "\n[REDACTED:password]\n"), len(vals))
	}
	if ref, _ := reference(p, []byte(in.String())); string(ref) != want.String() {
		t.Errorf("reference differs")
	}
}

// TestStageOrdersStreams: a read of one stream and what the other holds
// are staged, then committed, so that a value found in either is masked
// in both, whichever was read first (issue 27, the two-stream race). With
// plain Writes in the same order, the bare value is shown: the test is of
// Stage and Commit, not of luck.
func TestStageOrdersStreams(t *testing.T) {
	p := mustPolicy(t, Options{})
	for _, c := range []struct{ name, bare, keyed, v string }{
		{"random", "%s\n", "password=%s\n", "Zq8v3LmN0pXr7TsW"},
		{"digits and @", "x %s\n", "password=%s\n", "12345@78"},
		{"hex under a key", "%s\n", "api_key: %s\n", "9f86d081884c7d659a2feaa0c55ad015"},
		{"mid-line, JSON", `{"msg":"%s"}` + "\n", `{"password":"%s"}` + "\n", "Wq7#kLm2Pz9x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bare := strings.Replace(c.bare, "%s", c.v, 1)
			keyed := strings.Replace(c.keyed, "%s", c.v, 1)
			// The bare stream is staged first, as when capwrap reads it
			// first and finds the keyed one in the other pipe.
			for _, bareFirst := range []bool{true, false} {
				mem := NewMemory()
				var ob, ok bytes.Buffer
				wb, wk := p.NewSharedWriter(&ob, mem), p.NewSharedWriter(&ok, mem)
				first, second := wb, wk
				fb, sb := bare, keyed
				if !bareFirst {
					first, second, fb, sb = wk, wb, keyed, bare
				}
				first.Stage([]byte(fb))
				second.Stage([]byte(sb))
				if ob.Len()+ok.Len() != 0 {
					t.Fatalf("Stage released %q %q", ob.String(), ok.String())
				}
				first.Commit()
				second.Commit()
				if strings.Contains(ob.String()+ok.String(), c.v) {
					t.Errorf("bare first %v: shown: %q / %q", bareFirst, ob.String(), ok.String())
				}
				wb.Close()
				wk.Close()
			}
			// Without staging, in the racy order: shown.
			mem := NewMemory()
			var ob, ok bytes.Buffer
			wb, wk := p.NewSharedWriter(&ob, mem), p.NewSharedWriter(&ok, mem)
			wb.Write([]byte(bare))
			wk.Write([]byte(keyed))
			if !strings.Contains(ob.String(), c.v) {
				t.Errorf("plain Write masked the value read before its key: %q", ob.String())
			}
		})
	}
}

// TestStageSameAsWrite: a stream written as Stage and Commit, in any
// pieces, gives the output of Write (and of the whole-buffer reference).
func TestStageSameAsWrite(t *testing.T) {
	p := mustPolicy(t, Options{})
	in := testlog.Make(300<<10, 40)
	want := redactChunks(t, p, in, nil)
	r := rand.New(rand.NewPCG(27, 3))
	for round := 0; round < 20; round++ {
		var out bytes.Buffer
		w := p.NewWriter(&out)
		for i := 0; i < len(in); {
			n := min(len(in)-i, 1+r.IntN(300<<10>>uint(r.IntN(12))))
			switch r.IntN(3) {
			case 0:
				w.Write(in[i : i+n])
			case 1:
				w.Stage(in[i : i+n])
				w.Commit()
			default: // several stages before one commit
				w.Stage(in[i : i+n/2])
				w.Stage(in[i+n/2 : i+n])
				w.Commit()
			}
			i += n
		}
		w.Close()
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("round %d: output differs from Write's (%d vs %d bytes)", round, out.Len(), len(want))
		}
	}
}
