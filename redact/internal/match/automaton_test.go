package match

import "testing"

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
