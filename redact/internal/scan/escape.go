package scan

// Display escapes: the control sequences a terminal acts on and does not
// show (ECMA-48 §5.3-5.6; xterm's ctlseqs): colours (SGR, "\x1b[1;31m"),
// erase ("\x1b[K", what grep --color writes after each colour), cursor
// moves, charset designations ("\x1b(B", part of tput sgr0), hyperlinks
// and titles (OSC "\x1b]8;;URL\x1b\\", ended by ST or BEL).

// Esc is the byte that starts a display escape.
const Esc = 0x1b

// EscMax is the longest control sequence (CSI or nF) EscapeAt reads, in
// bytes; a longer run of parameter bytes is not an escape.
const EscMax = 64

// EscStringMax is the longest control string (OSC, DCS, SOS, PM, APC, with
// its terminator) EscapeAt reads, in bytes (an OSC 8 hyperlink holds a URL).
const EscStringMax = 1024

// EscapeAt reads a display escape at w[i] and returns its length: Yes and
// n when w[i:i+n] is one, No when w[i] is not ESC or what follows is not
// a well-formed escape within its bound, More when w ends inside a prefix
// of one. The forms (ECMA-48 §5.3-5.6):
//   - CSI: ESC '[', parameter bytes 0x30-0x3F, intermediate bytes
//     0x20-0x2F, a final byte 0x40-0x7E (at most EscMax bytes in all);
//   - control strings: ESC and one of ']' (OSC), 'P' (DCS), 'X' (SOS),
//     '^' (PM), '_' (APC), then any bytes but ESC, CAN, SUB up to ST
//     (ESC '\') or, for all as xterm accepts, BEL (at most EscStringMax);
//   - nF: ESC, intermediate bytes 0x20-0x2F, a final byte 0x30-0x7E
//     ("\x1b(B");
//   - ESC and one byte 0x30-0x7E (Fp, Fe, Fs: "\x1b7", "\x1bM", "\x1b\\").
func EscapeAt(w []byte, i int) (int, Lex) {
	if i >= len(w) || w[i] != Esc {
		return 0, No
	}
	if i+1 == len(w) {
		return 0, More
	}
	switch c := w[i+1]; {
	case c == '[':
		// Parameter bytes, intermediate bytes, a final byte (§5.4).
		j := escRun(w, i, i+2, 0x30, 0x3f)
		return escFinal(w, i, escRun(w, i, j, 0x20, 0x2f), 0x40)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		for j := i + 2; j-i < EscStringMax; j++ {
			if j == len(w) {
				return 0, More
			}
			switch w[j] {
			case 0x07:
				return j + 1 - i, Yes
			case Esc:
				if j+1 == len(w) {
					return 0, More
				}
				if w[j+1] == '\\' && j+2-i <= EscStringMax {
					return j + 2 - i, Yes
				}
				return 0, No
			case 0x18, 0x1a: // CAN, SUB cancel the string
				return 0, No
			}
		}
		return 0, No
	case 0x20 <= c && c <= 0x2f:
		return escFinal(w, i, escRun(w, i, i+1, 0x20, 0x2f), 0x30)
	case 0x30 <= c && c <= 0x7e:
		return 2, Yes
	}
	return 0, No
}

// escRun returns the end of the run of bytes in [lo, hi] from w[j] on, in
// the escape that starts at w[i], stopping at EscMax bytes of escape.
func escRun(w []byte, i, j int, lo, hi byte) int {
	for j < len(w) && j-i < EscMax && lo <= w[j] && w[j] <= hi {
		j++
	}
	return j
}

// escFinal reads the final byte, at w[j], of the escape that starts at
// w[i]: one of lo to 0x7e ends it (its length, Yes); the end of w may
// still bring it (More); anything else, or EscMax bytes without it, is no
// escape (No).
func escFinal(w []byte, i, j int, lo byte) (int, Lex) {
	switch {
	case j-i >= EscMax:
		return 0, No
	case j == len(w):
		return 0, More
	case lo <= w[j] && w[j] <= 0x7e:
		return j + 1 - i, Yes
	}
	return 0, No
}
