package redact

import "strings"

// Limits of what a Writer remembers of the secrets it replaced, in bytes and
// in secrets: enough for MaskSeen to recognise pieces of them elsewhere,
// bounded whatever the stream holds.
const (
	seenSecretBytes = 512
	seenSecretCount = 64
)

// SeenFragment is the shortest run of bytes, shared with a replaced secret,
// that MaskSeen masks: the 8 of SPEC conformance ("a fragment of 8+ bytes").
const SeenFragment = 8

// seenSecrets collects the bytes of the secrets a stream replaced: the
// first seenSecretBytes of each of the first seenSecrets merged runs.
type seenSecrets struct {
	list [][]byte
	cur  []byte
	open bool
}

// Start starts a new secret (a marker was just written); with Dropped and
// End, seenSecrets is the match.Observer of a Writer's runs.
func (s *seenSecrets) Start(int64, int32) {
	s.flush()
	s.open = len(s.list) < seenSecretCount
}

// Dropped records dropped bytes of the current secret.
func (s *seenSecrets) Dropped(b []byte) {
	if s.open && len(s.cur) < seenSecretBytes {
		s.cur = append(s.cur, b[:min(len(b), seenSecretBytes-len(s.cur))]...)
	}
}

// End does nothing: a secret's bytes are kept until the next one starts.
func (s *seenSecrets) End(int64) {}

func (s *seenSecrets) flush() {
	if len(s.cur) >= SeenFragment {
		s.list = append(s.list, s.cur)
	}
	s.cur = nil
	s.open = false
}

// all returns the recorded secrets (copies are not needed: the caller only
// reads them after the stream is closed).
func (s *seenSecrets) all() [][]byte {
	s.flush()
	return s.list
}

// Seen returns the secrets this Writer replaced (at most 64, each cut to
// 512 bytes), for MaskSeen. Call it after Close.
func (w *Writer) Seen() [][]byte { return w.seen.all() }

// MaskSeen masks in s every run of SeenFragment or more bytes that also
// occurs inside one of the secrets, as "[REDACTED:seen]". It is for text
// written before the secrets were known, such as the receipt's command
// label: a command that prints a credential in pieces (printf "AKIA...";
// printf "...") carries no whole secret, but its pieces are the secret's.
// Overlapping and adjacent runs are merged into one marker.
func MaskSeen(s string, secrets [][]byte) string {
	if len(secrets) == 0 || len(s) < SeenFragment {
		return s
	}
	grams := make(map[string]struct{})
	for _, sec := range secrets {
		for i := 0; i+SeenFragment <= len(sec); i++ {
			grams[string(sec[i:i+SeenFragment])] = struct{}{}
		}
	}
	covered := make([]bool, len(s))
	hit := false
	for i := 0; i+SeenFragment <= len(s); i++ {
		if _, ok := grams[s[i:i+SeenFragment]]; ok {
			hit = true
			for j := i; j < i+SeenFragment; j++ {
				covered[j] = true
			}
		}
	}
	if !hit {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !covered[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString("[REDACTED:seen]")
		for i < len(s) && covered[i] {
			i++
		}
	}
	return b.String()
}
