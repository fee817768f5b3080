// Package preview owns the bounded preview capwrap prints when a command
// ends (SPEC §5) and the preview summary of the receipt (SPEC §7): it keeps
// the head and the tail of each stream in memory bounded by the budgets
// (Keeper), turns raw bytes into display text (Sanitize), chooses where to cut
// and writes the preview with its omission markers (Render).
//
// It knows nothing of processes, pipes, files or redaction: it is given the
// bytes of each stream (already redacted, the same bytes the capture file
// holds, so its byte offsets and line numbers are the file's) and strings
// naming the command that reads it back and the file.
//
// Units: budgets are in characters (Unicode code points) of display text;
// the overall ceilings are in bytes of UTF-8 (MaxBytes) and in characters
// (MaxChars) of everything printed; every count of the stream itself
// (total, omitted, offsets, the read limit) is in bytes of the raw stream,
// and line counts are counts of '\n' bytes.
package preview

import (
	"bytes"
	"math"
	"strconv"
	"unicode/utf8"
)

// Spec defaults of Options (SPEC §5: --stdout-chars, --stderr-chars,
// --preview-bytes; SPEC §8: the --limit of `capwrap read`).
const (
	DefaultStdoutChars = 8000
	DefaultStderrChars = 2000
	DefaultMaxBytes    = 16384
	DefaultReadLimit   = 9000 // bytes: `capwrap read`'s page, which fits a 10,000-character view with its status line (SPEC §8)
)

// Stream is one stream given to Render.
type Stream struct {
	// Keeper holds what was kept of the stream; nil counts as an empty stream.
	Keeper *Keeper
	// Name is "stdout" or "stderr"; it appears in the header and the marker.
	// Empty means the name of the argument's position in Render.
	Name string
	// File is the path of the stream's capture file as shown to the user,
	// named by the binary summary (for tools such as file(1) or xxd) and,
	// with a ReadCmd, by the omission marker (SPEC §5: for jq, grep and
	// the like); "" when no file is kept (neither then names one).
	File string
	// ReadCmd is the prefix of the command that reads this stream back, e.g.
	// "capwrap read 20261130T030612Z-k3j4 --stream stderr"; "" when none
	// (the marker then offers no command). The marker appends the range:
	// " --lines A:B" (1-based, inclusive: exactly the omitted lines) when
	// both cuts fall on line boundaries, otherwise " --offset N --limit M"
	// (bytes: exactly the omitted bytes), or only " --offset N" when the
	// omitted bytes do not fit in one read (see Options.ReadLimit).
	ReadCmd string
	// FileShort says the file holds only the first FileBytes bytes of the
	// stream (persistence stopped early: capture partial, SPEC §4). The
	// marker then offers to read back only what the file holds.
	FileShort bool
	FileBytes int64
	// Digest, when not nil, is the error digest of the stream's omitted
	// part (see ScanErrors), printed after the marker when it was made for
	// a range inside the part omitted; nil, or one without lines, prints
	// nothing. The caller makes it for a failed run (SPEC §5) from the
	// range a first Render omitted (Info.OmittedFrom).
	Digest *Digest
}

// Options are the budgets of the preview (SPEC §5). A zero field takes its
// spec default (DefaultStdoutChars, DefaultStderrChars, DefaultMaxBytes,
// DefaultReadLimit), except MaxChars, whose zero means no ceiling; a
// negative character budget counts as 0 (only the marker is shown); a
// negative MaxBytes or MaxChars means no ceiling.
type Options struct {
	// StdoutChars is the budget of displayed stdout text, in characters
	// (code points); 25% of it goes to the head, the rest to the tail.
	StdoutChars int
	// StderrChars is the budget of displayed stderr text, in characters.
	StderrChars int
	// MaxBytes is the ceiling on everything Render prints, in bytes of
	// UTF-8: both sections, headers, markers, binary summaries and notes.
	// When the streams' budgets would go over it, the text shown of the
	// streams is cut (see Render) so that the whole text fits.
	MaxBytes int
	// MaxChars is the ceiling on everything Render prints, in characters
	// (code points), counted like MaxBytes: the caller passes 10,000 minus
	// what it prints after the preview (the receipt line), so that all
	// of preview mode fits the 10,000 characters of SPEC §5. Zero or
	// negative: no ceiling.
	MaxChars int
	// Failed tells that the command failed (non-zero exit, signal, timeout):
	// the characters of StdoutChars that stdout does not use are added to
	// StderrChars.
	Failed bool
	// ReadLimit is the most bytes one run of the marker's read command
	// prints (`capwrap read`'s --limit default, SPEC §8); 0 means
	// DefaultReadLimit, a negative value no limit. The marker says its
	// command "prints them" only when the omitted bytes fit in one read;
	// otherwise that it "reads them 9,000 bytes at a time" and how --grep
	// finds lines in them.
	ReadLimit int64
	// Notes are lines the caller wants in the preview, such as "capwrap:
	// the command timed out after 10s: SIGTERM, then SIGKILL" (SPEC §5: a
	// capture that ended early or lost something says so, with its
	// remedy). Render prints each after the sections, in order, as one
	// line: sanitized like the streams' text (escapes removed, control
	// bytes escaped), cut at its first line end; a note that is empty then
	// prints nothing. Notes count toward MaxBytes and MaxChars but are
	// never cut to fit them: the streams' text makes room for them.
	Notes []string
}

func (o Options) withDefaults() Options {
	if o.StdoutChars == 0 {
		o.StdoutChars = DefaultStdoutChars
	}
	if o.StderrChars == 0 {
		o.StderrChars = DefaultStderrChars
	}
	switch {
	case o.MaxBytes == 0:
		o.MaxBytes = DefaultMaxBytes
	case o.MaxBytes < 0:
		o.MaxBytes = math.MaxInt
	}
	if o.MaxChars <= 0 {
		o.MaxChars = math.MaxInt
	}
	switch {
	case o.ReadLimit == 0:
		o.ReadLimit = DefaultReadLimit
	case o.ReadLimit < 0:
		o.ReadLimit = math.MaxInt64
	}
	o.StdoutChars = max(o.StdoutChars, 0)
	o.StderrChars = max(o.StderrChars, 0)
	return o
}

// States of Info.State (the receipt's streams.*.preview.state, SPEC §7).
const (
	StateComplete  = "complete"
	StateTruncated = "truncated"
)

// Info is one stream's preview summary, the receipt's streams.*.preview
// object (SPEC §7).
type Info struct {
	// State is "complete" when every byte of the stream is represented in
	// the preview, else "truncated".
	State string
	// ShownBytes counts the bytes of UTF-8 display text printed for the
	// stream, excluding headers, the marker or binary summary, and a line
	// end Render adds after a last line that has none.
	ShownBytes int64
	// OmittedBytes counts the stream's raw bytes not represented in the
	// preview: a contiguous range between the shown head and tail (all
	// bytes, for binary output).
	OmittedBytes int64
	// OmittedLines counts the newline bytes in the omitted range: the
	// number of lines left out when the cuts fall on line boundaries.
	OmittedLines int64
	// OmittedFrom is the stream offset of the omitted range's first byte,
	// and OmittedLine the 1-based number of the line it is in (both 0
	// when nothing was omitted).
	OmittedFrom, OmittedLine int64
	// Altered tells that the text shown for the stream is not the stream's
	// bytes as they are: carriage-return frames collapsed, "\r\n" shown as
	// "\n", ANSI escape sequences removed, control bytes escaped, invalid
	// UTF-8 replaced by U+FFFD, or the stream summarized as binary output.
	// It is about the bytes shown, whatever State says: a complete stream
	// that is Altered was shown whole but not byte for byte, so only its
	// file holds it as it was. The line end Render adds after a last line
	// that has none, and the one before a marker, are no alteration.
	Altered bool
}

// Render writes the preview of both streams (SPEC §5) and returns it with
// each stream's summary for the receipt (SPEC §7).
//
// The text is the stdout section, then, if stderr is non-empty, a header
// line "--- stderr (312 bytes) ---" and the stderr section, then the
// Options.Notes, one line each. The stdout section has a header "---
// stdout (N bytes) ---" only when stderr is shown too; an empty stdout
// prints nothing. Each non-empty section ends with '\n' (one is added after
// a partial last line), so what follows starts on its own line. A compact
// success, "hello world 123456\n" on stdout and nothing on stderr, renders
// as exactly that line.
//
// A section is one of (SPEC §5):
//
//   - the whole stream, sanitized, when its Keeper holds all of it and its
//     display fits the budget;
//   - its head (25% of the characters and of the bytes allowed), one
//     omission marker line, and its tail (the rest). The head ends on a line
//     boundary when a newline lies within its last quarter, the tail starts
//     on one when a newline lies within its first quarter; otherwise they
//     end and start on a code point, never inside a UTF-8 or escape
//     sequence. The omitted part is one contiguous byte range of the
//     stream. The marker gives its size in bytes and lines and, when the
//     Stream has a ReadCmd, the command that reads exactly that range:
//     --lines A:B when both cuts are line boundaries, else --offset N
//     --limit M. It says the command "prints them" only when the range
//     fits in one read (Options.ReadLimit); a longer one "reads them 9,000
//     bytes at a time" (in offset mode the command is then --offset N alone: an
//     explicit --limit M would print all M bytes at once), and, when it
//     holds a line end, "add `--grep REGEX` to it to find lines in them" (in offset
//     mode "from there": the search runs on to the end of the stream). With
//     a read command, the marker names the stream's file first ("; file
//     F;"), for the tools that read it directly;
//   - for binary output, one line "… capwrap: binary output, N bytes of
//     stdout not shown; file F …". Output is binary when it is mostly not
//     text: at least 64 bytes were kept (of the head or of the tail) and
//     more than 30% of them are invalid UTF-8 or control bytes other than
//     \a \b \t \n \v \f \r and ESC (NUL included). A NUL or a few in
//     text are shown escaped (`\x00`) like any other control byte. Its
//     Info counts every byte and line as omitted.
//
// Ceilings: the whole text is at most Options.MaxBytes bytes and
// Options.MaxChars characters. Headers, markers, binary summaries, the
// line ends Render adds and the notes are printed whole; when they and the
// text the budgets allow would go over a ceiling, the text shown of the
// streams is cut, with the same head and tail rules: on failure first the
// share of stdout's budget that stderr took, then stdout's text, on success
// stderr's first; the other only once the first shows nothing. Room is reserved by the exact size of what is printed besides
// the streams' text, not by an estimate. Only when the headers, markers,
// summaries and notes alone are over a ceiling is the text longer: it then
// shows nothing of the streams but those lines.
//
// The tail Keeper's oldest bytes may be the end of a sequence whose start
// is gone; the tail then starts at the first line start within 512 bytes,
// else at the first ESC within 64 bytes, else at the first code point. Only
// the remnant of an escape sequence with no line end or ESC near it can show
// as text.
//
// Render does not change the Keepers and costs O(kept bytes) time and
// memory (plus the size of the notes).
func Render(stdout, stderr Stream, opt Options) (text []byte, out, errInfo Info) {
	text, out, errInfo, _ = RenderSections(stdout, stderr, opt)
	return text, out, errInfo
}

// RenderSections is Render that also returns where each stream's section
// is in text: the byte range of its text, marker or binary summary and
// digest, its header excluded (empty for an empty stream). A live view of
// the stream (SPEC §12) ends as that text.
func RenderSections(stdout, stderr Stream, opt Options) (text []byte, out, errInfo Info, sections [2][2]int) {
	opt = opt.withDefaults()
	if stdout.Name == "" {
		stdout.Name = "stdout"
	}
	if stderr.Name == "" {
		stderr.Name = "stderr"
	}
	l := layout{ko: newKept(stdout.Keeper), ke: newKept(stderr.Keeper), so: &stdout, se: &stderr, opt: opt,
		notes: appendNotes(nil, opt.Notes)}
	so, se, text := l.plan()
	return text, so.info(), se.info(), l.sections
}

// layout plans and writes the text of a Render.
type layout struct {
	ko, ke *kept
	so, se *Stream
	opt    Options // with defaults applied
	notes  []byte  // the notes' lines
	// sections are the byte ranges of each stream's section in the last
	// text written.
	sections [2][2]int
}

// plan returns the sections and the text. It plans within the budgets;
// then, while the text is over a ceiling, it plans again with the
// streams' text bounded by the ceiling less the exact size of the rest of
// the last text, less a margin that doubles after each try (the rest can
// grow when the text shrinks: a marker appears, a count gains a digit).
// It stops when the text fits or shows nothing of the streams: at most
// about log2 of the ceiling tries, two or three in practice, each
// O(kept bytes).
func (l *layout) plan() (so, se section, text []byte) {
	freeO, freeE, ec := planFree(l.ko, l.ke, l.opt)
	so, se = freeO, freeE
	text = l.text(&so, &se, nil)
	limB, limC := l.opt.MaxBytes, l.opt.MaxChars
	for margin := 0; ; margin = max(64, 2*margin) {
		shownB, shownC := so.shownBytes()+se.shownBytes(), so.shownChars()+se.shownChars()
		restB := len(text) - shownB
		fitsB := len(text) <= limB
		restC, fitsC := 0, true
		if limC != math.MaxInt {
			restC = utf8.RuneCount(text) - shownC
			fitsC = restC+shownC <= limC
		}
		if fitsB && fitsC || shownB == 0 {
			return so, se, text
		}
		mb, mc := math.MaxInt, math.MaxInt
		if limB != math.MaxInt {
			mb = max(0, limB-restB-margin)
		}
		if limC != math.MaxInt {
			mc = max(0, limC-restC-margin)
		}
		so, se = planCeil(l.ko, l.ke, l.opt, freeO, freeE, ec, mb, mc)
		text = l.text(&so, &se, text[:0])
	}
}

// text writes the sections and the notes to dst.
func (l *layout) text(so, se *section, dst []byte) []byte {
	if l.ko.total > 0 {
		if l.ke.total > 0 {
			dst = appendHeader(dst, l.so.Name, l.ko.total)
		}
		l.sections[0][0] = len(dst)
		dst = appendSection(dst, so, l.so, l.opt.ReadLimit)
		l.sections[0][1] = len(dst)
	}
	if l.ke.total > 0 {
		dst = appendHeader(dst, l.se.Name, l.ke.total)
		l.sections[1][0] = len(dst)
		dst = appendSection(dst, se, l.se, l.opt.ReadLimit)
		l.sections[1][1] = len(dst)
	}
	dst = append(dst, l.notes...)
	if dst == nil {
		dst = []byte{}
	}
	return dst
}

// planFree plans both sections within their budgets alone (opt with
// defaults applied) and returns them with stderr's character budget after
// the transfer of what stdout leaves on failure.
func planFree(ko, ke *kept, opt Options) (so, se section, ec int) {
	oc := opt.StdoutChars
	ec = opt.StderrChars
	so = ko.plan(oc, math.MaxInt)
	if opt.Failed {
		ec += max(0, oc-so.shownChars())
	}
	se = ke.plan(ec, math.MaxInt)
	return so, se, ec
}

// planCeil plans both sections so that the text they show together is at
// most mb bytes and mc characters, from their plans within the budgets:
// the stream cut first (stdout if Failed, else stderr) gets what the other
// leaves; the other is cut only when that is not enough.
func planCeil(ko, ke *kept, opt Options, so, se section, ec, mb, mc int) (section, section) {
	over := func() bool {
		return so.shownBytes()+se.shownBytes() > mb || so.shownChars()+se.shownChars() > mc
	}
	if !over() {
		return so, se
	}
	oc := opt.StdoutChars
	if opt.Failed {
		if se.shownChars() > opt.StderrChars {
			// First the share of stdout's budget that stderr took goes
			// back: a failure's small stdout is not cut to make room
			// for the part of stderr it left.
			own := ke.plan(opt.StderrChars, math.MaxInt)
			se = ke.plan(max(opt.StderrChars, min(ec, mc-so.shownChars())), max(own.shownBytes(), mb-so.shownBytes()))
			if !over() {
				return so, se
			}
		}
		so = ko.plan(min(oc, mc-se.shownChars()), max(0, mb-se.shownBytes()))
		if over() {
			se = ke.plan(min(ec, mc-so.shownChars()), mb-so.shownBytes())
		}
	} else {
		se = ke.plan(min(ec, mc-so.shownChars()), max(0, mb-so.shownBytes()))
		if over() {
			so = ko.plan(min(oc, mc-se.shownChars()), mb-se.shownBytes())
		}
	}
	return so, se
}

func (s *section) info() Info {
	in := Info{State: StateComplete, ShownBytes: int64(s.shownBytes()), Altered: s.altered}
	if !s.whole && s.b > s.a {
		in.State = StateTruncated
		in.OmittedBytes = s.b - s.a
		in.OmittedLines = s.omLines
		in.OmittedFrom, in.OmittedLine = s.a, s.aLine
	}
	return in
}

func appendHeader(dst []byte, name string, total int64) []byte {
	dst = append(dst, "--- "...)
	dst = appendInline(dst, name)
	dst = append(dst, " ("...)
	dst = appendCount(dst, total, "byte", "bytes")
	return append(dst, ") ---\n"...)
}

func appendSection(dst []byte, s *section, st *Stream, readLimit int64) []byte {
	start := len(dst)
	endLine := func() {
		if len(dst) > start && dst[len(dst)-1] != '\n' {
			dst = append(dst, '\n')
		}
	}
	if s.binary {
		dst = append(dst, "… capwrap: binary output, "...)
		dst = appendCount(dst, s.b-s.a, "byte", "bytes")
		dst = append(dst, " of "...)
		dst = appendInline(dst, st.Name)
		dst = append(dst, " not shown"...)
		if st.File != "" {
			dst = append(dst, "; file "...)
			dst = appendInline(dst, st.File)
		}
		return append(dst, " …\n"...)
	}
	dst = append(dst, s.head...)
	if !s.whole && s.b > s.a {
		endLine()
		dst = appendMarker(dst, s, st, readLimit)
		if d := st.Digest; d != nil && len(d.Lines) > 0 && !s.binary && d.From >= s.a && d.To <= s.b {
			dst = appendDigest(dst, d)
		}
	}
	dst = append(dst, s.tail...)
	endLine()
	return dst
}

// appendMarker appends the omission marker line. It names the stream's file
// (when the stream has one and a read command) and the read command, and
// promises no more than one read prints (readLimit bytes):
//
//	… capwrap: 4,210 bytes (97 lines) of stdout omitted; file to/ID/stdout.log; `capwrap read ID --lines 121:217` prints them …
//	… capwrap: 871,904 bytes (19,731 lines) of stdout omitted; file to/ID/stdout.log; `capwrap read ID --lines 121:19851` reads them 9,000 bytes at a time; add `--grep REGEX` to it to find lines in them …
//	… capwrap: 9,000 bytes (within one line) of stdout omitted; `capwrap read ID --offset 2000 --limit 9000` prints them …
//	… capwrap: 2,089,152 bytes (within one line) of stdout omitted; `capwrap read ID --offset 2000` reads them 9,000 bytes at a time …
//
// --lines A:B when both cuts fall on line boundaries, else --offset N with
// --limit M when the M omitted bytes fit in one read. A range that does not
// fit is read by repeating the command where the previous read says to go
// on (`capwrap read` prints the next line or offset), so the marker gives
// its start and, in line mode, its end; in offset mode the reads go on past
// the omitted bytes, whose count the marker gives. The --grep hint (the
// same command with --grep added) is given with a range of more than one
// read that holds a line end: in line mode it searches exactly the omitted
// lines, in offset mode the stream from the omitted bytes on.
//
// When the file stops early (Stream.FileShort) inside the omitted bytes the
// marker says "the capture holds only the stream's first N bytes" and
// offers "the part it holds" the same way; when it stops before them, that
// "they are not in it". Without a read command the marker ends after
// "omitted".
func appendMarker(dst []byte, s *section, st *Stream, readLimit int64) []byte {
	dst = append(dst, "… capwrap: "...)
	dst = appendCount(dst, s.b-s.a, "byte", "bytes")
	dst = append(dst, " ("...)
	switch {
	case s.omLines > 0:
		dst = appendCount(dst, s.omLines, "line", "lines")
	case s.lineMode:
		dst = append(dst, "1 unterminated line"...)
	default:
		dst = append(dst, "within one line"...)
	}
	dst = append(dst, ") of "...)
	dst = appendInline(dst, st.Name)
	dst = append(dst, " omitted"...)
	if st.ReadCmd == "" {
		return append(dst, " …\n"...)
	}
	if st.File != "" {
		dst = append(dst, "; file "...)
		dst = appendInline(dst, st.File)
	}
	end, them, in := s.b, "them", "in them"
	if st.FileShort && st.FileBytes < s.b {
		// The file stops inside or before the omitted part.
		if st.FileBytes == 0 {
			return append(dst, "; the capture holds none of the stream: they are not in it …\n"...)
		}
		dst = append(dst, "; the capture holds only the stream's first "...)
		dst = appendCount(dst, st.FileBytes, "byte", "bytes")
		if st.FileBytes <= s.a {
			return append(dst, ": they are not in it …\n"...)
		}
		dst = append(dst, ": `"...)
		end, them, in = st.FileBytes, "the part it holds", "in it"
	} else {
		dst = append(dst, "; `"...)
	}
	if !s.lineMode && end == s.b {
		in = "from there" // an offset read runs on into the tail
	}
	fits := end-s.a <= readLimit
	dst = appendReadCmd(dst, s, st, end, end == s.b, fits)
	if fits {
		dst = append(dst, "` prints "...)
		dst = append(dst, them...)
		return append(dst, " …\n"...)
	}
	dst = append(dst, "` reads "...)
	dst = append(dst, them...)
	dst = append(dst, ' ')
	dst = appendSize(dst, readLimit)
	dst = append(dst, " at a time"...)
	if s.omLines > 0 {
		dst = append(dst, "; add `--grep REGEX` to it to find lines "...)
		dst = append(dst, in...)
	}
	return append(dst, " …\n"...)
}

// appendReadCmd appends the command that reads the omitted part back up to
// stream offset end: --lines A:B (A: when withEnd is false, the file ending
// before B) on line cuts, else --offset, with --limit in bytes when the
// range fits in one read.
func appendReadCmd(dst []byte, s *section, st *Stream, end int64, withEnd, fits bool) []byte {
	dst = appendInline(dst, st.ReadCmd)
	if s.lineMode {
		dst = append(dst, " --lines "...)
		dst = strconv.AppendInt(dst, s.la, 10)
		dst = append(dst, ':')
		if withEnd {
			dst = strconv.AppendInt(dst, s.lb, 10)
		}
		return dst
	}
	dst = append(dst, " --offset "...)
	dst = strconv.AppendInt(dst, s.a, 10)
	if !fits {
		return dst
	}
	dst = append(dst, " --limit "...)
	return strconv.AppendInt(dst, end-s.a, 10)
}

// appendSize appends a size in bytes the way a person writes it when it is
// a whole number of KiB or MiB ("64 KiB", "1 MiB"), else as a count of
// bytes ("100,000 bytes").
func appendSize(dst []byte, n int64) []byte {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return appendCount(dst, n>>20, "MiB", "MiB")
	case n >= 1<<10 && n%(1<<10) == 0:
		return appendCount(dst, n>>10, "KiB", "KiB")
	}
	return appendCount(dst, n, "byte", "bytes")
}

// appendNotes appends each note as one line of display text: sanitized,
// cut at its first line end, skipped when that leaves nothing.
func appendNotes(dst []byte, notes []string) []byte {
	for _, n := range notes {
		line, _, _ := bytes.Cut(Sanitize([]byte(n)), newline)
		if len(line) > 0 {
			dst = append(append(dst, line...), '\n')
		}
	}
	return dst
}

// appendInline appends a caller's string (a name, a path, a command) as
// display text on one line: sanitized, with line ends escaped.
func appendInline(dst []byte, s string) []byte {
	for _, c := range Sanitize([]byte(s)) {
		if c == '\n' {
			dst = append(dst, `\x0a`...)
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// appendCount appends n with thousands separators and the unit, singular
// for 1: "871,904 bytes", "1 line".
func appendCount(dst []byte, n int64, one, many string) []byte {
	s := strconv.FormatInt(n, 10)
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		dst = append(dst, '-')
		s = s[1:]
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, s[i])
	}
	dst = append(dst, ' ')
	if n == 1 {
		return append(dst, one...)
	}
	return append(dst, many...)
}
