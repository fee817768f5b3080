package match

import (
	"bytes"
	"math/rand"
	"slices"
	"testing"

	"github.com/capwrap/capwrap/redact/internal/scan"
	"github.com/capwrap/capwrap/redact/internal/testlog"
)

func TestTeddyMasksMatchPortable(t *testing.T) {
	if !haveTeddy() {
		t.Skip("no vector prefilter on this CPU")
	}
	r := rand.New(rand.NewSource(1))
	log := testlog.Make(1<<16, 50)
	for name, m := range teddyMatchers() {
		t.Run(name, func(t *testing.T) {
			tt := m.ac.ted.wait()
			if tt == nil {
				t.Fatal("no tables built")
			}
			for n := 0; n < 200; n++ {
				b := make([]byte, n)
				r.Read(b)
				checkTeddyMasks(t, tt, b, 100)
				checkTeddyMasks(t, tt, log[n:n+n], 100)
			}
			checkTeddyMasks(t, tt, log, 1<<16)
			checkTeddyMasks(t, tt, log, 3) // masks full before b ends
		})
	}
}

// TestTeddySuperset: every position where a keyword of the set starts, in
// any case variant it matches, survives the vector filter.
func TestTeddySuperset(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, name := range []string{"catalogue", "fuzz"} {
		t.Run(name, func(t *testing.T) {
			set := loadKeywords(name)
			tt := newTeddy(set.texts, set.exact)
			for ki, k := range set.texts {
				for rep := 0; rep < 8; rep++ {
					b := make([]byte, 64+len(k))
					for i := range b {
						b[i] = byte(r.Intn(256))
					}
					at := r.Intn(32)
					for j, c := range k {
						if vs := caseVariants(c, set.exact[ki]); len(vs) > 1 {
							c = vs[r.Intn(len(vs))]
						}
						b[at+j] = c
					}
					if teddyBlock(tt, b, 0)&(1<<at) == 0 {
						t.Fatalf("keyword %q at %d of %q filtered out", k, at, b)
					}
				}
			}
		})
	}
}

// TestTeddyFilters: on a log, the vector filter discards most positions
// (it is a filter, not a pass-through), and the matcher finds the same
// keyword occurrences and writes the same output with and without it.
func TestTeddyFilters(t *testing.T) {
	log := testlog.Make(1<<20, 100)
	for name, m := range teddyMatchers() {
		t.Run(name, func(t *testing.T) {
			set := loadKeywords(name)
			tt := newTeddy(set.texts, set.exact)
			survivors := 0
			for off := 0; off+32+teddyLen-1 <= len(log); off += 32 {
				m := teddyBlock(tt, log, off)
				for ; m != 0; m &= m - 1 {
					survivors++
				}
			}
			if survivors > len(log)/10 {
				t.Errorf("%d of %d positions survive the filter", survivors, len(log))
			}
			sameOccurrences(t, m, log, []int{4096, 65536, 7})
		})
	}
}

// FuzzTeddy: for any bytes, the vector masks equal the portable ones, and
// the vector path finds the same keyword occurrences as the scalar path
// and writes the same output.
func FuzzTeddy(f *testing.F) {
	f.Add([]byte("tests/test_auth.py::test_token PASSED MTAxNjE password=x eyJhbGci hf_x ://"))
	f.Add(testlog.Make(2048, 5))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := teddyMatchers()["fuzz"]
		if haveTeddy() {
			checkTeddyMasks(t, m.ac.ted.wait(), data, len(data)/32+1)
		}
		sameOccurrences(t, m, data, []int{1 + len(data)/3})
	})
}

// TestTeddyBuiltInBackground: a matcher is usable before its vector tables
// are ready (the scalar filter runs meanwhile) and gives the same output as
// once they are; the tables are not built for a short output, and are once
// teddyStartAfter bytes have been scanned.
func TestTeddyBuiltInBackground(t *testing.T) {
	log := testlog.Make(1<<16, 50)
	early := literal(loadKeywords("catalogue"))
	got := writeChunks(t, early, log, []int{4096})
	if haveTeddy() && early.ac.ted.started.Load() {
		t.Fatalf("vector tables started after %d bytes, want after %d", len(log), teddyStartAfter)
	}
	more := testlog.Make(teddyStartAfter, 50)
	writeChunks(t, early, more, []int{4096})
	if haveTeddy() && !early.ac.ted.started.Load() {
		t.Fatalf("vector tables not started after %d bytes", len(log)+len(more))
	}
	vectorReady(early)
	want := writeChunks(t, early, log, []int{4096})
	if !bytes.Equal(got, want) {
		t.Fatal("the output before the vector tables were ready differs from the output after")
	}
}

// tokenDet is a detector for the repeat tests: the alphanumerics after
// "token=" are a span.
type tokenDet struct{}

var setAlnum = scan.NewSet("A-Za-z0-9")

func (tokenDet) Window(kw int) int { return kw + 64 }

func (tokenDet) Eval(w, pre []byte, kw int, final bool, sink SpanSink) (bool, int) {
	i := scan.Skip(w, kw, setAlnum, 64)
	if i == len(w) && !final {
		return true, kw
	}
	if i > kw {
		sink.Add(kw, i, 0, Extender{})
	}
	return false, 0
}

// TestRepeatScanPathsAgree: the three ways of finding remembered values
// (scanHeads for a few heads, the vector prefilter over their first bytes
// for more, the scalar pair filter without AVX2) mask the same bytes, for 1
// to 12 values, their cut prefixes, and writes split anywhere.
func TestRepeatScanPathsAgree(t *testing.T) {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	r := rand.New(rand.NewSource(7))
	m := New([]Keyword{{Text: []byte("token="), Exact: true, Det: tokenDet{}}}, [][]byte{[]byte("[token]")}, nil)
	vectorReady(m)
	remember := func(v []byte) []byte {
		if len(v) <= 256 {
			return v
		}
		return nil
	}
	for n := 1; n <= 12; n++ {
		vals := make([]string, n)
		var in bytes.Buffer
		for i := range vals {
			v := make([]byte, 16+r.Intn(20))
			for j := range v {
				v[j] = alnum[r.Intn(len(alnum))]
			}
			vals[i] = string(v)
			in.WriteString("token=" + vals[i] + "\n")
		}
		for line := 0; line < 3000; line++ {
			v := vals[r.Intn(n)]
			switch r.Intn(4) {
			case 0:
				in.WriteString("uploading with " + v + " now\n")
			case 1:
				in.WriteString("cut " + v[:8+r.Intn(len(v)-8)] + "\n")
			case 2:
				in.WriteString(v + v[:3] + "\n")
			default:
				in.WriteString("tests/test_mod.py::test_case PASSED [ 42%]\n")
			}
		}
		sizes := []int{1 + r.Intn(7), 4096, 1 + r.Intn(100)}
		run := func(heads, vector bool) []byte {
			saved := headScan
			headScan = heads
			defer func() { headScan = saved }()
			mv := m
			if !vector {
				mv = m.WithoutVector()
			}
			var out bytes.Buffer
			w := NewWriter(mv, &out, remember, nil, nil)
			in := in.Bytes()
			for i, k := 0, 0; i < len(in); k++ {
				c := min(len(in)-i, sizes[k%len(sizes)])
				w.Write(in[i : i+c])
				i += c
			}
			w.Close()
			return out.Bytes()
		}
		want := run(false, false)
		for _, v := range vals {
			if bytes.Contains(want, []byte(v)) {
				t.Fatalf("%d values: %s shown", n, v)
			}
		}
		if got := run(true, true); !bytes.Equal(got, want) {
			t.Errorf("%d values: scanHeads differs from the scalar path", n)
		}
		if got := run(false, true); !bytes.Equal(got, want) {
			t.Errorf("%d values: the vector path differs from the scalar path", n)
		}
	}
}

// TestPrefilterList: the prefilter's list holds, in order, every
// position from where it starts that the vector pass and direct.may both
// accept, and no other, up to where the vector pass stops, for lists that
// start anywhere (a feed after the first starts where the previous one
// ended); skip, the scalar filter beyond, returns the first position where
// mayStart is true (or one of the last two, which it cannot judge).
func TestPrefilterList(t *testing.T) {
	if !haveTeddy() {
		t.Skip("no vector prefilter on this CPU")
	}
	ac := teddyMatchers()["catalogue"].ac
	tt := ac.ted.wait()
	b := testlog.Make(1<<14, 7)
	r := rand.New(rand.NewSource(3))
	for _, from := range []int{0, 1, 31, 32, 63, 64, 100 + r.Intn(1000), len(b) - 200, len(b) - 40} {
		var pf prefilter
		pf.fill(ac, b, from)
		if pf.from != from || pf.to < len(b)-(32+teddyLen-1) {
			t.Fatalf("from %d: the prefilter covers [%d, %d) of %d bytes", from, pf.from, pf.to, len(b))
		}
		var want []int32
		for q := from; q < pf.to; q++ {
			if teddyBlock(tt, b[from:], (q-from)&^31)&(1<<((q-from)&31)) != 0 && ac.dir.mayAt(b, q) {
				want = append(want, int32(q))
			}
		}
		if !slices.Equal(pf.pos, want) || from == 0 && len(want) < 100 {
			t.Fatalf("from %d: the list holds %d positions, want %d:\n%v\n%v", from, len(pf.pos), len(want), pf.pos, want)
		}
	}
	for i := 0; i < len(b); i += 1 + r.Intn(40) {
		want := i
		for want < len(b)-2 && !ac.mayStart(b, want) {
			want++
		}
		if got := ac.skip(b, i); got != want {
			t.Fatalf("skip(%d) = %d, want %d", i, got, want)
		}
	}
}

// TestTeddyFoldedSets: the case-insensitive keywords get sets of tables of
// their own, one fingerprint each, looked up with the input folded to
// lower case; those sets come after the exact ones (the vector code folds
// the input in place when it reaches the first). Every keyword, in every
// mix of cases of its first bytes and at every offset of a block,
// survives the portable filter and the vector one.
func TestTeddyFoldedSets(t *testing.T) {
	set := loadKeywords("catalogue")
	tt := newTeddy(set.texts, set.exact)
	folded, exactAfter := 0, false
	for s := tt; s != nil; s = s.next {
		switch s.fold {
		case [32]byte{}:
			exactAfter = exactAfter || folded > 0
		default:
			folded++
			for _, c := range s.fold {
				if c != 0x02 {
					t.Fatalf("fold byte %#x", c)
				}
			}
		}
	}
	if folded == 0 || exactAfter {
		t.Fatalf("%d folded sets, an exact set after them: %v", folded, exactAfter)
	}
	if none := newTeddy(nil, nil); none == nil || teddyBlock(none, make([]byte, 64), 0) != 0 {
		t.Fatal("no keywords: want a set of tables that accepts nothing")
	}
	r := rand.New(rand.NewSource(9))
	for ki, k := range set.texts {
		n := min(len(k), teddyLen)
		for mix := 0; mix < 1<<n; mix++ {
			if set.exact[ki] && mix > 0 {
				break
			}
			b := make([]byte, 64+len(k)+35)
			for i := range b {
				b[i] = byte(r.Intn(256))
			}
			at := r.Intn(64)
			copy(b[at:], k)
			for j := 0; j < n; j++ {
				if vs := caseVariants(k[j], set.exact[ki]); mix&(1<<j) != 0 && len(vs) > 1 {
					b[at+j] = vs[1]
				}
			}
			blk := at &^ 31
			if teddyBlock(tt, b, blk)&(1<<(at&31)) == 0 {
				t.Fatalf("keyword %q as %q at %d filtered out", k, b[at:at+n], at)
			}
			if haveTeddy() {
				checkTeddyMasks(t, tt, b, 8) // each vector kernel, the same masks
			}
		}
	}
}
