package preview

import (
	"unicode/utf8"
)

// The raw stream is cut into units: a code point, a control byte, an escape
// sequence, a carriage return or a line end. Every unit has a fixed display
// (possibly empty), which is what makes display sizes computable from any
// unit boundary and lets Render cut the raw stream where the display allows.

type unitKind uint8

const (
	kText unitKind = iota // a valid, printable code point, or '\t': shown as is
	kCtl                  // a C0 control byte, DEL or a lone ESC: shown as `\x1b`
	kC1                   // a C1 control code point U+0080..U+009F: shown as `\u009b`
	kBad                  // a byte of invalid UTF-8: shown as U+FFFD
	kSeq                  // an escape sequence (CSI, OSC, other ESC): not shown
	kCR                   // '\r' not followed by '\n': starts a new frame of the line
	kNL                   // "\n" or "\r\n": shown as "\n"
)

// Limits on the length of escape sequences, in bytes. A longer one is not
// treated as a sequence (see nextUnit), which keeps every decision local.
const (
	maxCSI    = 64   // ESC [ params intermediates final
	maxEscSeq = 16   // ESC intermediates final
	maxString = 4096 // OSC, DCS, SOS, PM, APC up to BEL or ESC \
)

// nextUnit returns the kind and length in bytes of the unit that starts p
// (len(p) > 0). When eof is false, p may continue beyond its end; if the unit
// cannot be decided without seeing more, nextUnit returns n == 0. When eof is
// true, n > 0 always, and the result for a unit that ends before len(p) does
// not depend on whether p is cut just after it.
func nextUnit(p []byte, eof bool) (k unitKind, n int) {
	switch b := p[0]; {
	case b >= 0x20 && b < 0x7f: // printable ASCII, the common case
		return kText, 1
	case b == '\n':
		return kNL, 1
	case b == '\r':
		if len(p) < 2 {
			if !eof {
				return 0, 0
			}
			return kCR, 1
		}
		if p[1] == '\n' {
			return kNL, 2
		}
		return kCR, 1
	case b == '\t':
		return kText, 1
	case b == 0x1b:
		return escUnit(p, eof)
	case b < 0x80:
		return kCtl, 1
	}
	if !eof && !utf8.FullRune(p) {
		return 0, 0
	}
	r, n := utf8.DecodeRune(p)
	switch {
	case r == utf8.RuneError && n == 1:
		return kBad, 1
	case r <= 0x9f:
		return kC1, n
	}
	return kText, n
}

// escUnit decides the unit that starts with ESC (p[0] == 0x1b). A sequence
// ends at its final byte; a malformed one ends before the first byte that
// cannot belong to it (that byte, often a newline, starts the next unit), so
// no sequence ever spans a line end. An ESC that starts no sequence is a
// control byte and shown escaped.
func escUnit(p []byte, eof bool) (unitKind, int) {
	if len(p) < 2 {
		if !eof {
			return 0, 0
		}
		return kCtl, 1
	}
	switch c := p[1]; {
	case c == '[': // CSI: parameters 0x30-0x3F, intermediates 0x20-0x2F, final 0x40-0x7E
		i := 2
		for ; i < len(p) && i < maxCSI; i++ {
			x := p[i]
			switch {
			case x >= 0x40 && x <= 0x7e:
				return kSeq, i + 1
			case x >= 0x20 && x <= 0x3f:
			default:
				return kSeq, i
			}
		}
		if i == maxCSI {
			return kSeq, maxCSI
		}
		if !eof {
			return 0, 0
		}
		return kSeq, len(p)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		// OSC, DCS, SOS, PM, APC: a string up to BEL or ST (ESC \).
		for i := 2; i < len(p) && i < maxString; i++ {
			switch p[i] {
			case 0x07:
				return kSeq, i + 1
			case '\n':
				return kSeq, i
			case 0x1b:
				if i+1 == len(p) {
					if !eof {
						return 0, 0
					}
					return kSeq, len(p)
				}
				if p[i+1] == '\\' {
					return kSeq, i + 2
				}
				return kSeq, i
			}
		}
		if len(p) >= maxString {
			// Too long to be a title or a link: drop only the introducer
			// and show the rest rather than hide an unbounded amount.
			return kSeq, 2
		}
		if !eof {
			return 0, 0
		}
		return kSeq, len(p)
	case c >= 0x20 && c <= 0x2f: // nF: intermediates, then a final 0x30-0x7E
		i := 2
		for ; i < len(p) && i < maxEscSeq && p[i] >= 0x20 && p[i] <= 0x2f; i++ {
		}
		switch {
		case i == maxEscSeq:
			return kSeq, i
		case i == len(p):
			if !eof {
				return 0, 0
			}
			return kSeq, i
		case p[i] >= 0x30 && p[i] <= 0x7e:
			return kSeq, i + 1
		}
		return kSeq, i
	case c >= 0x30 && c <= 0x7e: // two-byte sequences: ESC 7, ESC M, ESC =, ...
		return kSeq, 2
	}
	return kCtl, 1
}

// unitSize returns the display size of a unit of kind k and n raw bytes, in
// characters and in bytes of UTF-8. Carriage returns and line ends are
// handled by the caller.
func unitSize(k unitKind, n int) (chars, size int) {
	switch k {
	case kText:
		return 1, n
	case kCtl:
		return 4, 4 // \x1b
	case kC1:
		return 6, 6 // \u009b
	case kBad:
		return 1, 3 // U+FFFD
	case kNL:
		return 1, 1
	}
	return 0, 0
}

const hexDigits = "0123456789abcdef"

// appendUnit appends the display of a unit u of kind k (not kSeq, kCR, kNL).
func appendUnit(dst []byte, k unitKind, u []byte) []byte {
	switch k {
	case kCtl:
		return append(dst, '\\', 'x', hexDigits[u[0]>>4], hexDigits[u[0]&15])
	case kC1:
		r, _ := utf8.DecodeRune(u)
		return append(dst, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&15])
	case kBad:
		return utf8.AppendRune(dst, utf8.RuneError)
	}
	return append(dst, u...)
}

// Sanitize converts raw stream bytes into display text (SPEC §5) and
// returns it in a new slice:
//
//   - ANSI escape sequences are removed: CSI (ESC [ ... final byte), OSC,
//     DCS, SOS, PM and APC strings (up to BEL or ESC \), and other ESC
//     sequences (ESC, intermediates, final byte).
//   - A line overwritten by carriage returns shows only its last frame: the
//     last non-empty text between carriage returns. "\r\n" is a line end, not
//     an overwrite, and is shown as "\n".
//   - Other control bytes except '\n' and '\t' (C0, DEL, a lone ESC) are
//     shown escaped as `\x00`; C1 control code points as `\u0085`.
//   - Each byte of invalid UTF-8 is shown as U+FFFD.
//
// The output is valid UTF-8 and contains no control byte but '\n' and '\t'.
// Its length in characters is what the budgets of Options count.
func Sanitize(raw []byte) []byte {
	out, _ := render(make([]byte, 0, len(raw)), raw, true)
	return out
}

// SanitizePrefix is Sanitize of a stream's bytes that go on after raw:
// it converts raw up to its last unit that the bytes after it cannot
// change (an escape sequence or UTF-8 sequence cut at the end stays out)
// and returns the display text and how many bytes of raw it converted.
// raw must start at a unit boundary (a stream's start, or where the last
// call stopped).
func SanitizePrefix(raw []byte) (text []byte, n int) {
	return render(make([]byte, 0, len(raw)), raw, false)
}

// render appends the display of raw to dst and returns it with the number of
// raw bytes consumed. raw must start at a unit boundary. When eof is false,
// an undecidable unit at the end of raw is left out and not counted.
//
// Frames: dst[lineStart:] holds the current line's display. After a carriage
// return that ended a non-empty frame, it holds that frame ("pending") until
// the next visible unit replaces it, so a line shows its last non-empty
// frame. meter mirrors this logic with sizes only.
func render(dst, raw []byte, eof bool) ([]byte, int) {
	lineStart := len(dst)
	pending := false
	q := 0
	for q < len(raw) {
		k, n := nextUnit(raw[q:], eof)
		if n == 0 {
			break
		}
		u := raw[q : q+n]
		q += n
		switch k {
		case kSeq:
		case kCR:
			if len(dst) > lineStart {
				pending = true
			}
		case kNL:
			dst = append(dst, '\n')
			lineStart = len(dst)
			pending = false
		default:
			if pending {
				dst = dst[:lineStart]
				pending = false
			}
			dst = appendUnit(dst, k, u)
		}
	}
	return dst, q
}

// meter follows the display size of a stream prefix unit by unit, with the
// same frame logic as render.
type meter struct {
	baseC, baseB int // display of the complete lines: characters, bytes
	lineC, lineB int // display of the current line
	pending      bool
}

func (m *meter) add(k unitKind, n int) {
	switch k {
	case kSeq:
	case kCR:
		if m.lineB > 0 {
			m.pending = true
		}
	case kNL:
		m.baseC += m.lineC + 1
		m.baseB += m.lineB + 1
		m.lineC, m.lineB, m.pending = 0, 0, false
	default:
		if m.pending {
			m.lineC, m.lineB, m.pending = 0, 0, false
		}
		c, b := unitSize(k, n)
		m.lineC += c
		m.lineB += b
	}
}

func (m *meter) chars() int { return m.baseC + m.lineC }
func (m *meter) bytes() int { return m.baseB + m.lineB }
