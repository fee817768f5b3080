package preview

import (
	"bytes"
	"unicode/utf8"
)

// syncWindow is how far into the kept tail Render looks for a line start
// when the bytes before the tail are gone (see kept.tailRegion). It is at
// most the slack a Keeper keeps, so the budget is never short of bytes.
const syncWindow = slackBytes

// escSyncWindow is how far Render looks for an ESC to start the tail at when
// there is no line start within syncWindow.
const escSyncWindow = 64

// quarterRule reports whether a cut on the line boundary at lineC characters
// is taken instead of a cut on a code point at cutC characters: true when the
// newline lies within the quarter of the shown part nearest the cut (SPEC §5).
func quarterRule(lineC, cutC int) bool { return 4*lineC >= 3*cutC }

// selectHead returns the end a of the head to show: r[:a] displays within
// maxC characters and maxB bytes. r starts the stream; eof tells whether it
// also ends it. a is on a line boundary when a newline lies within the last
// quarter of the head, otherwise the last code-point (unit) boundary that
// fits, never inside a UTF-8 or escape sequence.
func selectHead(r []byte, eof bool, maxC, maxB int) int {
	var m meter
	best, bestC := 0, 0
	line, lineC := 0, 0
	for q := 0; q < len(r); {
		k, n := nextUnit(r[q:], eof)
		if n == 0 {
			break
		}
		m.add(k, n)
		q += n
		if c, b := m.chars(), m.bytes(); c <= maxC && b <= maxB {
			best, bestC = q, c
			if k == kNL {
				line, lineC = q, c
			}
		}
		if m.baseC > maxC || m.baseB > maxB {
			break // complete lines only grow: nothing further fits
		}
	}
	if best != line && quarterRule(lineC, bestC) {
		return line
	}
	return best
}

// selectTail returns the start b of the tail to show: t[b:] displays within
// maxC characters and maxB bytes, with b >= s0. t ends the stream and t[s0:]
// starts at a unit boundary. b is on a line boundary when a newline lies
// within the first quarter of the tail, otherwise the first unit boundary
// that fits. Lines are measured from the end, each from its start (a line
// start is a unit boundary: no unit spans a line end), so the work is
// bounded by what is shown plus one line.
func selectTail(t []byte, s0, maxC, maxB int) int {
	b := len(t)
	usedC, usedB := 0, 0
	for b > s0 {
		ls := s0
		if i := bytes.LastIndexByte(t[s0:b-1], '\n'); i >= 0 {
			ls = s0 + i + 1
		}
		c, n := measure(t[ls:b])
		if usedC+c <= maxC && usedB+n <= maxB {
			usedC += c
			usedB += n
			b = ls
			continue
		}
		p, pc := suffixCut(t[ls:b], maxC-usedC, maxB-usedB)
		if p < b-ls && !quarterRule(usedC, usedC+pc) {
			b = ls + p
		}
		break
	}
	return b
}

// measure returns the display size of raw (which ends the stream or a line)
// in characters and bytes.
func measure(raw []byte) (chars, size int) {
	var m meter
	for q := 0; q < len(raw); {
		k, n := nextUnit(raw[q:], true)
		m.add(k, n)
		q += n
	}
	return m.chars(), m.bytes()
}

type unitPos struct {
	off  int
	kind unitKind
	c, b int
}

// suffixCut returns the smallest unit boundary p of one line (raw bytes up
// to and including its line end, if any) such that the display of line[p:]
// fits in remC characters and remB bytes, and that display's size in
// characters. It returns len(line) when nothing fits. The display of a
// suffix is the suffix of the line's last non-empty frame plus the line end,
// so p lies inside that frame.
func suffixCut(line []byte, remC, remB int) (p, pc int) {
	var units []unitPos
	nlC, nlB := 0, 0
	fs := 0                // index of the current frame's first unit
	fStart, fEnd := -1, -1 // last non-empty frame: units [fStart, fEnd)
	visible := false       // the current frame has a visible unit
	for q := 0; q < len(line); {
		k, n := nextUnit(line[q:], true)
		c, b := unitSize(k, n)
		switch k {
		case kCR:
			if visible {
				fStart, fEnd = fs, len(units)
			}
			fs, visible = len(units)+1, false
		case kNL:
			nlC, nlB = c, b
		default:
			if c > 0 {
				visible = true
			}
		}
		if k == kNL {
			c, b = 0, 0
		}
		units = append(units, unitPos{q, k, c, b})
		q += n
	}
	if visible {
		fStart, fEnd = fs, len(units)
		if nlC > 0 {
			fEnd-- // the line end is not part of the frame
		}
	}
	if fStart < 0 {
		return len(line), 0
	}
	offAt := func(j int) int {
		if j < len(units) {
			return units[j].off
		}
		return len(line)
	}
	p = len(line)
	sc, sb := nlC, nlB
	for j := fEnd; j >= fStart; j-- {
		if j < fEnd {
			sc += units[j].c
			sb += units[j].b
		}
		if sc > remC || sb > remB {
			break
		}
		p, pc = offAt(j), sc
	}
	return p, pc
}

// kept is what a Keeper holds, laid out for Render.
type kept struct {
	total, lines int64
	lastPartial  bool
	head         []byte // stream bytes [0, len(head))
	tail         []byte // stream bytes [total-len(tail), total)
	all          []byte // the whole stream when nothing was skipped, else nil
	binary       bool
}

func newKept(k *Keeper) *kept {
	if k == nil {
		return &kept{}
	}
	kp := &kept{total: k.total, lines: k.lines, lastPartial: k.LastLinePartial()}
	if k.total == 0 {
		return kp
	}
	kp.head = k.head
	kp.tail = k.tail()
	if k.skipped() == 0 {
		kp.all = append(append(make([]byte, 0, k.total), kp.head...), kp.tail...)
		kp.head, kp.tail = kp.all, kp.all
		kp.binary = isBinary(kp.all)
	} else {
		kp.binary = isBinary(kp.head) || isBinary(kp.tail)
	}
	return kp
}

// isBinary reports whether kept bytes look like binary output (SPEC §5):
// output that is mostly not text. "Mostly" means that at least 64 bytes
// were kept and more than 30% of them are not text: invalid UTF-8, or
// control bytes other than the ones terminals and build tools use (\t \n
// \v \f \r \b BEL ESC), NUL included. Executables, archives and images are
// far above that; text with a stray NUL or a few Latin-1 bytes far below,
// and is shown, its control bytes escaped, so that an error line next to a
// NUL still reaches the reader. Fewer than 64 bytes are always shown: their
// escaped display costs at most 4 characters a byte. Judged on the kept head
// and tail only, so it costs O(kept bytes).
func isBinary(p []byte) bool {
	if len(p) < 64 {
		return false
	}
	bad := 0
	for i := 0; i < len(p); {
		b := p[i]
		if b < 0x80 {
			if (b < 0x20 && !(b >= 0x07 && b <= 0x0d) && b != 0x1b) || b == 0x7f {
				bad++
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n == 1 {
			bad++
		}
		i += n
	}
	return bad*10 > len(p)*3
}

// section is the plan for one stream's part of the preview.
type section struct {
	binary   bool
	whole    bool   // shown whole: head is the display of the entire stream
	altered  bool   // the shown display is not the raw bytes it stands for
	head     []byte // display text of stream bytes [0, a)
	tail     []byte // display text of stream bytes [b, total)
	a, b     int64  // omitted stream bytes [a, b)
	omLines  int64  // newlines in [a, b)
	lineMode bool   // a and b are line boundaries: lines [la, lb] are omitted
	la, lb   int64  // 1-based inclusive line range of the omitted bytes
	aLine    int64  // 1-based number of the line byte a is in
	chars    int    // characters of head and tail
}

func (s *section) shownBytes() int { return len(s.head) + len(s.tail) }

func (s *section) shownChars() int { return s.chars }

// plan decides what to show of a stream within maxC characters and maxB bytes
// of display.
func (kp *kept) plan(maxC, maxB int) section {
	if kp.total == 0 {
		return section{whole: true}
	}
	if kp.binary {
		return section{binary: true, altered: true, a: 0, b: kp.total, omLines: kp.lines}
	}
	maxC, maxB = max(maxC, 0), max(maxB, 0)
	hc, hb := maxC/4, maxB/4
	tc, tb := maxC-hc, maxB-hb

	var (
		headRegion []byte // stream bytes [0, len(headRegion))
		a          int    // head cut: headRegion[:a] is shown
		t          []byte // tail region: stream bytes [base, total)
		base       int64
		s0         int // where the tail may start in t
		b          int // tail cut: t[b:] is shown
	)
	if kp.all != nil {
		if c, n := measure(kp.all); c <= maxC && n <= maxB {
			disp, _ := render(make([]byte, 0, n), kp.all, true)
			return section{whole: true, head: disp, altered: !bytes.Equal(disp, kp.all), chars: c}
		}
		headRegion = kp.all
		a = selectHead(kp.all, true, hc, hb)
		t, base, s0 = kp.all, 0, a
	} else {
		headRegion = kp.head
		a = selectHead(kp.head, false, hc, hb)
		// The ring's oldest byte is context only: the byte before the tail.
		t = kp.tail[1:]
		base = kp.total - int64(len(t))
		s0 = tailSync(kp.tail[0], t)
	}
	b = selectTail(t, s0, tc, tb)

	sec := section{a: int64(a), b: base + int64(b)}
	sec.head, _ = render(nil, headRegion[:a], true)
	sec.tail, _ = render(nil, t[b:], true)
	sec.altered = !bytes.Equal(sec.head, headRegion[:a]) || !bytes.Equal(sec.tail, t[b:])
	sec.chars = utf8.RuneCount(sec.head) + utf8.RuneCount(sec.tail)
	nlHead := int64(bytes.Count(headRegion[:a], newline))
	nlTail := int64(bytes.Count(t[b:], newline))
	sec.omLines = kp.lines - nlHead - nlTail
	sec.aLine = nlHead + 1

	// The omitted range is a range of whole lines when a starts a line and
	// b does, or b is the end of the stream.
	aLine := a == 0 || headRegion[a-1] == '\n'
	var before byte // the stream byte before b
	switch {
	case b > 0:
		before = t[b-1]
	case kp.all == nil:
		before = kp.tail[0] // the context byte
	default:
		before = '\n' // b == 0 only when a == 0 too: the stream start
	}
	bLine := before == '\n' || sec.b == kp.total
	if aLine && bLine && sec.b > sec.a {
		sec.lineMode = true
		sec.la = nlHead + 1
		sec.lb = nlHead + sec.omLines
		if sec.b == kp.total && kp.lastPartial {
			sec.lb++
		}
	}
	return sec
}

// tailSync returns where the display of a tail region t may start when the
// bytes before it are gone and ctx is the last byte before t: t may begin in
// the middle of an escape sequence or a UTF-8 sequence. It starts at the
// first line start within syncWindow bytes (no sequence spans a line end),
// else at the first ESC within escSyncWindow bytes, else after any UTF-8
// continuation bytes. What it skips is counted as omitted.
func tailSync(ctx byte, t []byte) int {
	if ctx == '\n' {
		return 0
	}
	if i := bytes.IndexByte(t[:min(len(t), syncWindow)], '\n'); i >= 0 {
		return i + 1
	}
	if i := bytes.IndexByte(t[:min(len(t), escSyncWindow)], 0x1b); i >= 0 {
		return i
	}
	i := 0
	for i < len(t) && i < 3 && t[i]&0xc0 == 0x80 {
		i++
	}
	return i
}
