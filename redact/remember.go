package redact

import "github.com/capwrap/capwrap/redact/internal/match"

// Repeats (SPEC §6: "a value identified once is a secret everywhere"): the
// value of every secret a detector found (a key's value, a token shape, a
// URL's password, a --redact-pattern match) is remembered, and every later
// occurrence of it is masked too, without its key, in the same stream and
// in the other streams that share the Memory. The matcher finds the later
// occurrences (internal/match, repeat.go); this file says which values are
// worth it.
//
// Bounds: at most MemoryValues values of MinRepeat to MaxRepeat bytes each
// (so at most 64 KiB of values), first come first kept; only values that
// look random or hold a symbol are remembered (see learnable).

const (
	// MinRepeat is the shortest value, in bytes, that is remembered: a
	// short password ("1234") would mask too much ordinary text.
	MinRepeat = 8
	// MaxRepeat is the longest value, in bytes, that is remembered; longer
	// secrets (private keys) are found again by their own shape.
	MaxRepeat = 256
	// MemoryValues bounds how many values a Memory, and each stream, keeps.
	MemoryValues = match.MemoryValues
)

// MinRepeat is not below the shortest value the matcher remembers: this
// line does not compile otherwise.
var _ = [1]struct{}{}[min(MinRepeat-match.MinValue, 0)]

// learnable reports whether a span's value is worth remembering: MinRepeat
// to MaxRepeat bytes that look random or hold a symbol (see shape.random,
// symbol). A password masked by its key may be a word ("parameter",
// "password1" in a test): masked everywhere, it would hide ordinary text.
func learnable(v []byte) bool {
	if len(v) < MinRepeat || len(v) > MaxRepeat {
		return false
	}
	s := shapeOf(v)
	return !s.allDigits() && (s.random() || symbol(v))
}

// Memory holds the secret values the Writers of one run found, so that each
// masks what the others found (stdout and stderr). It is safe for
// concurrent use. The zero value is not usable; call NewMemory.
type Memory struct {
	m *match.Memory
}

// NewMemory returns an empty Memory to share between the Writers of one
// run (Policy.NewSharedWriter).
func NewMemory() *Memory { return &Memory{m: match.NewMemory()} }

// shared returns what the matcher shares, nil for a nil Memory.
func (m *Memory) shared() *match.Memory {
	if m == nil {
		return nil
	}
	return m.m
}
