package redact

import "github.com/capwrap/capwrap/redact/internal/match"

// Repeats (SPEC §6: "a value identified once is a secret everywhere"): the
// value of every secret a detector found (a key's value, a token shape, a
// URL's password, a --redact-pattern match) is remembered, and every later
// occurrence of it is masked too, without its key, in the same stream and
// in the other streams that share the Memory. The matcher finds the later
// occurrences (internal/match, repeat.go); this file says which part of a
// value is remembered.
//
// Bounds: at most MemoryValues values of MinRepeat to MaxRepeat bytes each,
// and at most MemoryBytes bytes of them in all, first come first kept.
// Whatever its characters (issue 27: "12345@78", digits only, a word), a
// value is remembered, with two exceptions: one byte repeated ("********",
// "xxxxxxxx": a placeholder, or a rule of dashes, which a later table
// would lose) and what a separator leaves shorter than MinRepeat.

const (
	// MinRepeat is the shortest value, in bytes, that is remembered. A
	// value is masked wherever it occurs, inside a longer word or number
	// too, so a short one would mask ordinary text: "1234" is in every
	// fourth timestamp, "admin" in every path; 8 bytes is also the
	// shortest value a password rule asks of a person (NIST SP 800-63B
	// §5.1.1.2: "at least 8 characters"), and the matcher's own floor
	// (match.MinValue, which keys values by their first 8 bytes).
	MinRepeat = 8
	// MaxRepeat is the longest value, in bytes, that is remembered: as
	// long as a literal secret the matcher finds (match.MaxLiteral,
	// 4,096), which bounds the bytes held back for a possible occurrence
	// at the end of a read. Longer secrets (private keys) are found again
	// by their own shape.
	MaxRepeat = match.MaxLiteral
	// MemoryValues bounds how many values a Memory, and each stream, keeps.
	MemoryValues = match.MemoryValues
	// MemoryBytes bounds the bytes of the values a Memory, and each
	// stream, keeps: 64 KiB (so 16 values of MaxRepeat bytes, or 256 of
	// 256).
	MemoryBytes = match.MemoryBytes
)

// MinRepeat is not below the shortest value the matcher remembers: this
// line does not compile otherwise.
var _ = [1]struct{}{}[min(MinRepeat-match.MinValue, 0)]

// learnable returns the part of a span's value to remember, nil for none:
// the value without the separators it may begin with ("=" of "password:
// =V", ":" or blanks: remembered, they would eat the "=" of a later
// "X=V", issue 27), if that is MinRepeat to MaxRepeat bytes and not one
// byte repeated. A value masked by its key may be digits only, or a word:
// it was a secret there, so it is one wherever it recurs.
func learnable(v []byte) []byte {
	for len(v) > 0 && (v[0] == '=' || v[0] == ':' || v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	if len(v) < MinRepeat || len(v) > MaxRepeat || onlyByte(v) {
		return nil
	}
	return v
}

// onlyByte reports whether v is one byte repeated.
func onlyByte(v []byte) bool {
	for _, c := range v[1:] {
		if c != v[0] {
			return false
		}
	}
	return true
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
