package main

import "strings"

// verbNearMiss says which verb a command name that was not found is a
// typo of (capwrap lst, capwrap sho ID, capwrap wiat), for the hint "did
// you mean capwrap list?". A near miss is one edit away (a letter added,
// dropped, changed, or two neighbours swapped), or two for a verb of five
// letters or more (prune), and nearer to that verb than to any other; a
// verb itself, a path (a/b) or a name as near to two verbs (stow: show,
// stop) is none.
func verbNearMiss(name string) (verb string, ok bool) {
	if strings.Contains(name, "/") || len(name) > 8 {
		return "", false
	}
	best, tie := -1, false
	for _, v := range verbs {
		d := editDistance(name, v)
		limit := 1
		if len(v) >= 5 {
			limit = 2
		}
		switch {
		case d == 0:
			return "", false
		case d > limit:
		case best < 0 || d < best:
			verb, best, tie = v, d, false
		case d == best:
			tie = true
		}
	}
	if best < 0 || tie {
		return "", false
	}
	return verb, true
}

// editDistance is the optimal string alignment distance between a and b,
// in bytes: insertions, deletions, substitutions and transpositions of
// adjacent bytes, each counting one (Damerau-Levenshtein, no substring
// edited twice). For short words only: it takes len(a)*len(b) steps.
func editDistance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j].
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
