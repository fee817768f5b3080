package main

import "testing"

// TestVerbNearMiss: a command name one typo from a verb (two for prune)
// suggests it; a verb itself, a path, a name as near to two verbs or far
// from all does not.
func TestVerbNearMiss(t *testing.T) {
	tests := []struct {
		name, verb string // verb "": no hint
	}{
		{"lst", "list"}, {"lsit", "list"}, {"lists", "list"}, {"List", "list"}, {"liszt", "list"},
		{"sho", "show"}, {"shwo", "show"}, {"shows", "show"},
		{"reed", "read"}, {"raed", "read"}, {"rea", "read"}, {"reads", "read"},
		{"prun", "prune"}, {"prnue", "prune"}, {"prue", "prune"}, {"pruen", "prune"}, {"prnu", "prune"}, {"purne", "prune"},
		{"wiat", "wait"}, {"wati", "wait"}, {"wit", "wait"}, {"awit", "wait"},
		{"sotp", "stop"}, {"stp", "stop"}, {"sop", "stop"},
		{"hepl", "help"}, {"halp", "help"},
		// no hint
		{"list", ""}, {"prune", ""}, {"stow", ""}, {"shop", ""}, {"ls", ""}, {"cat", ""}, {"make", ""},
		{"pr", ""}, {"", ""}, {"./lst", ""}, {"bin/list", ""}, {"lister", ""}, {"readme", ""}, {"LIST", ""},
		{"waitforit", ""}, {"xyzzy", ""},
	}
	for _, tt := range tests {
		v, ok := verbNearMiss(tt.name)
		if ok != (tt.verb != "") || v != tt.verb {
			t.Errorf("verbNearMiss(%q) = %q, %v; want %q", tt.name, v, ok, tt.verb)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"list", "list", 0}, {"", "list", 4}, {"lst", "list", 1}, {"lsit", "list", 1},
		{"wiat", "wait", 1}, {"reed", "read", 1}, {"ca", "abc", 3}, {"prnu", "prune", 2}, {"stow", "stop", 1},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
		if got := editDistance(tt.b, tt.a); got != tt.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.d)
		}
	}
}
