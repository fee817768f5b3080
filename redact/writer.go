package redact

import "github.com/capwrap/capwrap/redact/internal/match"

// ErrClosed is returned by Write after Close.
var ErrClosed = match.ErrClosed

// Writer is a streaming redactor (SPEC §6): it writes to its destination the
// bytes written to it, each secret replaced by "[REDACTED:<kind>]" and every
// other byte unchanged (invalid UTF-8, NUL, ANSI escapes and CR included).
//
// Its output is the same however the input is split into writes. It holds
// back at most Policy.Holdback() bytes (4096 for the built-in rules, 4097
// with a --redact-pattern; a longer literal secret is found by its first
// 4096 bytes) of
// text that may still turn out to be part of a secret, and releases them once
// decided; bytes it has written are never rewritten. Its memory is about
// 64 KiB plus twice the holdback, plus 8 KiB of prefilter verdicts (one bit
// per byte of a 64 KiB chunk), whatever the size of a Write.
// A context rule holds back only what follows its keyword, so a prompt such
// as "Password: " is written at once. A secret too long for the window
// (a line longer than 4096 bytes when a line pattern applies, a private-key
// block with no END within 64 KiB, a token value running past its window) is
// dropped as it arrives and written as one marker, never released raw.
//
// A Writer is not safe for concurrent Writes; Replaced may be called from any
// goroutine.
type Writer struct {
	w    *match.Writer
	seen seenSecrets // the Observer of w's runs
}

// Write redacts b and writes whatever is now decided to the destination. It
// returns len(b) unless the destination fails, in which case it returns the
// number of bytes of b consumed and the destination's error; that error is
// sticky (every later Write and Close return it). After Close it returns
// ErrClosed. The destination sees at most one Write per 64 KiB of input plus
// one per marker.
func (w *Writer) Write(b []byte) (int, error) { return w.w.Write(b) }

// Close decides and writes out everything still held back (the end of the
// stream settles every open window). It does not close the destination. It
// returns the destination's error, if any; a second Close returns the same.
func (w *Writer) Close() error { return w.w.Close() }

// Replaced returns how many markers have been written so far (the receipt's
// redaction.replaced, SPEC §7): overlapping and adjacent secrets merged into
// one marker count once.
func (w *Writer) Replaced() int64 { return w.w.Replaced() }

// Decided returns how many bytes written to the Writer, from the first, are
// decided: written to the destination unchanged or replaced by a marker
// already written (the receipt's accepted bytes, SPEC §7, are counted from
// it). The others, at most Policy.Holdback() bytes, are held back until a
// later Write or Close decides them; after Close none are. It may be
// called from any goroutine.
func (w *Writer) Decided() int64 { return w.w.Decided() }

// Tentative returns the bytes at the end of the input that the Writer holds
// back only because they may begin one of the policy's keywords whose own
// text is public (the catalogue's "ghp_" or "password", a --redact-pattern's
// literal prefix), with nothing else pending; nil otherwise, and always
// while a value waits for a decision or the held bytes may begin a literal
// secret (an environment value, a --redact-file line). They are at most the
// longest keyword's length, in bytes, and reveal no secret: tee mode shows
// them on the live copy after a pause, so that a shell's echo or a prompt
// does not lag (SPEC §6; README "Decisions"). The slice is valid until the
// next Write or Close, and Tentative must not be called concurrently with
// them.
func (w *Writer) Tentative() []byte { return w.w.Tentative() }

// Stage is the first half of a Write: it scans b, decides what it can and
// remembers the values of the secrets found, sharing them at once with the
// Writers of the same Memory, but writes nothing until Commit. A run
// stages a read of one stream and what the other holds at that moment, and
// commits both, so that a value one reveals is masked in the other
// whichever capwrap read first (issue 27; README "Redaction", Repeats).
// It returns len(b) unless an earlier Write failed (its error) or the
// Writer is closed (ErrClosed). Until Commit the Writer holds all of b.
func (w *Writer) Stage(b []byte) (int, error) { return w.w.Stage(b) }

// Commit writes out what the Stages since the last Write or Commit
// decided, masking also the values the Writers sharing its Memory found
// in the meantime. It returns the destination's error, if any.
func (w *Writer) Commit() error { return w.w.Commit() }
