package match

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// keywordSet is a set of keywords as newAutomaton takes them.
type keywordSet struct {
	texts        [][]byte
	exact, after []bool
}

// loadKeywords reads testdata/keywords/name.txt: the keywords of redact's
// policies, which redact's TestMatchFixtures keeps up to date ("catalogue":
// the built-in catalogue; "fuzz": its fuzz policy, with short literal
// values and the "\n" of its line patterns).
func loadKeywords(name string) keywordSet {
	f, err := os.Open(filepath.Join("testdata", "keywords", name+".txt"))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	var set keywordSet
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		flags, quoted, ok := strings.Cut(line[2:], " ")
		text, err := strconv.Unquote(quoted)
		if !ok || err != nil || text == "" {
			panic(fmt.Sprintf("%s.txt: bad line %q", name, line))
		}
		set.texts = append(set.texts, []byte(text))
		set.exact = append(set.exact, line[0] == 'e')
		set.after = append(set.after, flags == "a")
	}
	if err := sc.Err(); err != nil {
		panic(err)
	}
	return set
}

// literal returns a Matcher for set whose keywords are their own spans,
// each keyword's kind its index and marker "[index]": its output shows
// every occurrence the automaton finds.
func literal(set keywordSet) *Matcher {
	kws := make([]Keyword, len(set.texts))
	markers := make([][]byte, len(set.texts))
	for i, t := range set.texts {
		kws[i] = Keyword{Text: t, Exact: set.exact[i], Kind: int32(i)}
		markers[i] = []byte(fmt.Sprintf("[%d]", i))
	}
	return New(kws, markers, nil)
}

// teddyMatchers are the literal matchers of the keyword sets the vector
// tests use, their vector tables built: the catalogue alone and the fuzz
// policy's (two-byte values, the one-byte line start of its patterns).
var teddyMatchers = sync.OnceValue(func() map[string]*Matcher {
	ms := map[string]*Matcher{"catalogue": literal(loadKeywords("catalogue")), "fuzz": literal(loadKeywords("fuzz"))}
	for _, m := range ms {
		vectorReady(m)
	}
	return ms
})

// vectorReady waits until m's vector tables are built (they are built in
// the background, see teddyLater), so that what follows runs the vector
// path from its first byte.
func vectorReady(m *Matcher) {
	m.BuildVector()
	if haveTeddy() && m.ac.ted.tables.Load() == nil {
		panic("no vector tables built")
	}
}

// writeChunks runs in through a Writer of m, written in pieces of the
// given sizes (cycled; nil means one write), and returns the output.
func writeChunks(t testing.TB, m *Matcher, in []byte, sizes []int) []byte {
	t.Helper()
	var out bytes.Buffer
	w := NewWriter(m, &out, nil, nil, nil)
	for i, k := 0, 0; i < len(in); k++ {
		n := len(in) - i
		if len(sizes) > 0 {
			n = min(n, sizes[k%len(sizes)])
		}
		if m, err := w.Write(in[i : i+n]); err != nil || m != n {
			t.Fatalf("Write = %d, %v; want %d, nil", m, err, n)
		}
		i += n
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// occurrences returns every occurrence of a keyword of m, a literal
// matcher, that a stream finds in in fed in pieces of the given sizes
// (cycled; nil: chunkSize): as spans, kind the keyword's index, in order
// of start. No span is merged or released.
func occurrences(m *Matcher, in []byte, sizes []int) []span {
	var s stream
	s.init(m, io.Discard, nil, nil, nil)
	for i, k := 0, 0; i < len(in); k++ {
		n := min(len(in)-i, chunkSize)
		if len(sizes) > 0 {
			n = min(n, sizes[k%len(sizes)])
		}
		s.feed(in[i : i+n])
		i += n
	}
	return s.spans
}

// sameOccurrences fails t unless m finds the same keyword occurrences in
// in with and without the vector prefilter, and writes the same output.
func sameOccurrences(t testing.TB, m *Matcher, in []byte, sizes []int) {
	t.Helper()
	scalar := m.WithoutVector()
	got, want := occurrences(m, in, sizes), occurrences(scalar, in, nil)
	if len(got) != len(want) {
		t.Fatalf("vector path found %d keyword occurrences, scalar path %d", len(got), len(want))
	}
	for i := range got {
		if got[i].s != want[i].s || got[i].e != want[i].e || got[i].kind != want[i].kind {
			t.Fatalf("occurrence %d: vector path %+v, scalar path %+v", i, got[i], want[i])
		}
	}
	if !bytes.Equal(writeChunks(t, m, in, sizes), writeChunks(t, scalar, in, nil)) {
		t.Fatal("vector and scalar paths write different output")
	}
}
