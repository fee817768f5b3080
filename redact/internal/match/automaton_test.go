package match

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// TestPartialKeywordRelease: the end of a write that may begin a keyword is
// held back only when a span could start at that keyword (a token shape):
// the start of a key word or a command, whose secret would come after it, is
// released at once. (Checked on the keywords of the catalogue's assignments
// and carriers alone, whose detectors say AfterKeyword: a token shape may
// begin with the same bytes, "api_org_".)
func TestPartialKeywordRelease(t *testing.T) {
	all := loadKeywords("catalogue")
	var set keywordSet
	for i, after := range all.after {
		if after {
			set.texts = append(set.texts, all.texts[i])
			set.exact = append(set.exact, all.exact[i])
			set.after = append(set.after, true)
		}
	}
	if len(set.texts) < 50 {
		t.Fatalf("only %d keywords whose spans start after them", len(set.texts))
	}
	held := func(ac *automaton, in string) int {
		st := int32(0)
		for _, c := range []byte(in) {
			st = ac.delta[int(st)*ac.nclass+int(ac.class[c])]
		}
		return ac.holdBack(st, []byte(in))
	}
	ac := newAutomaton(set.texts, set.exact, set.after)
	for _, kw := range set.texts {
		for i := 1; i < len(kw); i++ {
			if in := "x " + string(kw[:i]); held(ac, in) != 0 {
				t.Errorf("%q: %d bytes held", in, held(ac, in))
			}
		}
	}
	// A token shape's keyword, whose span starts at it.
	ac = newAutomaton(append(set.texts, []byte("ghp_")), append(set.exact, true), append(set.after, false))
	if held(ac, "key gh") != 2 || held(ac, "key ghp") != 3 || held(ac, "key GH") != 0 {
		t.Errorf("a token's start is not held as it should: %d, %d, %d", held(ac, "key gh"), held(ac, "key ghp"), held(ac, "key GH"))
	}
}

// catalogueMatcher is a Matcher of the catalogue's keywords, each with
// holdDet, its vector tables built.
func catalogueMatcher() (keywordSet, *Matcher) {
	set := loadKeywords("catalogue")
	kws := make([]Keyword, len(set.texts))
	for i, k := range set.texts {
		kws[i] = Keyword{Text: k, Exact: set.exact[i], Det: holdDet{}}
	}
	m := New(kws, [][]byte{[]byte("[token]")}, nil)
	vectorReady(m)
	return set, m
}

// holdDet is tokenDet with a window longer than the feed tests' input:
// a stream evaluates a candidate as soon as it finds it when its whole
// window is in (stream.occurs), so the candidates of a shorter window
// would leave the list the tests read.
type holdDet struct{ tokenDet }

func (holdDet) Window(kw int) int { return 1 << 16 }

// TestFeedEveryOccurrence: a stream finds every keyword occurrence that
// stepping the machine over every byte finds, in the same order (by end,
// then by start, then by keyword), however the input is split into feeds:
// a short one runs the machine, a longer one checks each position the
// prefilter lets through directly (direct.go) after the machine has
// finished the keywords that began before it. The text is made of
// keywords' pieces, in any case, so that partial matches, failure links,
// near misses and keywords cut by a feed's end abound. After each feed
// the stream's state is the machine's (holdBack reads it).
func TestFeedEveryOccurrence(t *testing.T) {
	set, m := catalogueMatcher()
	ac := m.ac
	r := rand.New(rand.NewSource(5))
	for round := 0; round < 200; round++ {
		var b []byte
		for len(b) < 4000 {
			k := set.texts[r.Intn(len(set.texts))]
			i, j := r.Intn(len(k)), r.Intn(len(k)+1)
			if r.Intn(3) > 0 {
				i = 0
			}
			for _, c := range k[i:max(i, j)] {
				if r.Intn(8) == 0 {
					c ^= 0x20
				}
				b = append(b, c)
			}
			b = append(b, " _-=.:/"[r.Intn(7)])
		}
		// The keywords found ending at each position, exact ones verified
		// (as stream.found does).
		var want []string
		st := int32(0)
		states := make([]int32, len(b)+1) // the machine's state after each byte
		for i, c := range b {
			st = ac.delta[int(st)*ac.nclass+int(ac.class[c])]
			states[i+1] = st
			for _, k := range ac.outputs(st) {
				if kw := set.texts[k]; !set.exact[k] || string(b[i+1-len(kw):i+1]) == string(kw) {
					want = append(want, fmt.Sprint(i+1-len(kw), " ", i+1, " ", k))
				}
			}
		}
		// Feeds short and long, cut anywhere.
		sizes := []int{1 + r.Intn(8), 1 + r.Intn(3*(directMin+ac.maxLen)), 1 + r.Intn(len(b))}
		for _, mv := range []*Matcher{m, m.WithoutVector()} {
			var s stream
			s.init(mv, nil, nil, nil, nil)
			for i, k := 0, 0; i < len(b); k++ {
				n := min(len(b)-i, sizes[k%len(sizes)])
				s.feed(b[i : i+n])
				i += n
				if s.st != states[i] {
					t.Fatalf("round %d, feeds of %v, vector %v: state %d after %d bytes, the machine's %d", round, sizes, mv.vector, s.st, i, states[i])
				}
			}
			var got []string
			for _, c := range s.cands {
				got = append(got, fmt.Sprint(c.start, " ", c.start+int64(len(set.texts[c.kw])), " ", c.kw))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, feeds of %v, vector %v: found %d keywords, the machine %d:\n%q\n%q", round, sizes, mv.vector, len(got), len(want), got, want)
			}
		}
	}
}

// TestFeedKeywordAcrossFeeds: every keyword is found when a feed ends
// anywhere inside it, whether the feed before is long (checked directly,
// the machine's state then taken from its last bytes) or short (the
// machine run over it), and whether the feed after is long (the machine
// run from that state until the keyword is decided) or short.
func TestFeedKeywordAcrossFeeds(t *testing.T) {
	set, m := catalogueMatcher()
	long := bytes.Repeat([]byte{'.'}, directMin+m.ac.maxLen)
	for ki, k := range set.texts {
		for cut := 1; cut < len(k); cut++ {
			for _, before := range [][]byte{long, {'.'}} {
				for _, after := range [][]byte{long, {'.'}} {
					var s stream
					s.init(m, nil, nil, nil, nil)
					s.feed(append(slices.Clip(before), k[:cut]...))
					s.feed(append(slices.Clone(k[cut:]), after...))
					found := false
					for _, c := range s.cands {
						found = found || c.kw == int32(ki) && c.start == int64(len(before))
					}
					if !found {
						t.Fatalf("%q cut after %d bytes, %d bytes before it, %d after: not found", k, cut, len(before), len(k)-cut+len(after))
					}
				}
			}
		}
	}
}
