package match

import (
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

// TestScanEveryOccurrence: scan, which skips where no keyword can start
// and leaves the state machine for the skip as soon as the bytes its
// state stands for cannot start one (but not when they start where it
// left the root state, known to be a possible start), reports every
// keyword end that stepping the machine over every byte reports. The
// text is made of keywords' pieces, in any case, so that partial
// matches, failure links and near misses abound.
func TestScanEveryOccurrence(t *testing.T) {
	set := loadKeywords("catalogue")
	ac := newAutomaton(set.texts, set.exact, nil)
	r := rand.New(rand.NewSource(5))
	for round := 0; round < 200; round++ {
		var b []byte
		for len(b) < 2000 {
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
		// (the skips pass over a case-mismatched exact keyword, which the
		// caller rejects anyway).
		found := func(at int, st int32) []string {
			var ks []string
			for _, k := range ac.outputs(st) {
				kw := set.texts[k]
				if !set.exact[k] || string(b[at-len(kw):at]) == string(kw) {
					ks = append(ks, string(kw))
				}
			}
			return ks
		}
		var want, got []string
		st := int32(0)
		for i, c := range b {
			st = ac.delta[int(st)*ac.nclass+int(ac.class[c])]
			if ac.hasOut[st] {
				for _, k := range found(i+1, st) {
					want = append(want, fmt.Sprint(i+1, k))
				}
			}
		}
		var pf prefilter
		st = 0
		for i := 0; i < len(b); {
			st, i = ac.scan(st, b, i, &pf)
			if ac.hasOut[st] {
				for _, k := range found(i, st) {
					got = append(got, fmt.Sprint(i, k))
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: scan found %d keywords, the machine %d:\n%q\n%q", round, len(got), len(want), got, want)
		}
	}
}
