package events

// The live view of one stream (SPEC §12): the last Cap characters of its
// display text, whole lines where it can, and what a consumer holds of it.

import (
	"bytes"
	"sync"
	"unicode/utf8"

	"github.com/capwrap/capwrap/preview"
)

// partialMax is how many raw bytes of a line without its end a view waits
// for before it shows them: a progress line or a prompt shows once it is
// this long; shorter, at the end of the run.
const partialMax = 4096

// source is the writer side of a stream's view: the raw (already
// redacted) bytes the stream's pipeline writes, of which it keeps the last
// len(ring) in a ring. Write is cheap (a copy under a lock) and never
// blocks on the events' reader.
type source struct {
	mu    sync.Mutex
	ring  []byte // the last min(total, cap(ring)) bytes, ring[off:] then ring[:off] once full
	off   int
	total int64 // bytes written
	lines int64 // '\n' bytes written
	dirty func()
}

func newSource(size int, dirty func()) *source {
	return &source{ring: make([]byte, 0, size), dirty: dirty}
}

// Write keeps p's last bytes and marks the view dirty. It never fails.
func (s *source) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.total += int64(len(p))
	s.lines += int64(bytes.Count(p, []byte{'\n'}))
	q := p
	if c := cap(s.ring); len(q) > c {
		q = q[len(q)-c:]
	}
	for len(q) > 0 {
		if len(s.ring) < cap(s.ring) {
			n := min(len(q), cap(s.ring)-len(s.ring))
			s.ring = append(s.ring, q[:n]...)
			q = q[n:]
			continue
		}
		n := copy(s.ring[s.off:], q)
		s.off = (s.off + n) % len(s.ring)
		q = q[n:]
	}
	s.mu.Unlock()
	s.dirty()
	return len(p), nil
}

// snapshot returns the raw bytes from stream offset from to the end (or
// from the oldest byte kept, when from is older: start says where they
// begin), with the totals.
func (s *source) snapshot(from int64) (raw []byte, start, total, lines int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := int64(len(s.ring))
	start = max(from, s.total-kept)
	n := int(s.total - start)
	raw = make([]byte, 0, n)
	ordered := append(s.ring[s.off:len(s.ring):len(s.ring)], s.ring[:s.off]...)
	raw = append(raw, ordered[len(ordered)-n:]...)
	return raw, start, s.total, s.lines
}

// piece is a part of a consumer's view: the display text of raw bytes
// [rawStart, rawEnd) of the stream, a line or a long line's part.
type piece struct {
	rawStart, rawEnd int64
	text             string
	chars            int
}

// view is what one consumer holds of a stream: pieces whose text, in
// order, is the consumer's view, at most cap characters.
type view struct {
	cap       int
	pieces    []piece
	chars     int
	published bool  // a replace was sent: the consumer holds the view
	rawEnd    int64 // the raw offset the view's text ends at
}

// update is what a publication sends of one stream: drop characters from
// the front of the consumer's view and append text (kind "append" when
// drop is 0), or replace the whole view (kind "replace").
type update struct {
	kind string
	drop int
	text string
}

// advance brings the view up to the source: raw holds the stream's bytes
// from start (at or after v.rawEnd, or later when those were lost) to its
// end; eof shows a last line without its end. It returns the update that
// takes a consumer from the old view to the new one (kind "" when nothing
// changed).
func (v *view) advance(raw []byte, start int64, eof bool) update {
	lost := start > v.rawEnd
	if lost {
		// The source no longer holds what follows the view: start over
		// at the first line start it holds.
		if i := bytes.IndexByte(raw, '\n'); i >= 0 && i+1 < len(raw) && i < partialMax {
			raw, start = raw[i+1:], start+int64(i+1)
		}
		v.pieces, v.chars = nil, 0
	} else {
		raw = raw[v.rawEnd-start:]
		start = v.rawEnd
	}
	var added []piece
	for len(raw) > 0 {
		n := bytes.IndexByte(raw, '\n') + 1
		if n == 0 { // a line without its end
			switch {
			case eof:
				n = len(raw)
			case len(raw) >= partialMax:
				_, n = preview.SanitizePrefix(raw[:partialMax])
			}
			if n == 0 {
				break
			}
		}
		text := string(preview.Sanitize(raw[:n]))
		added = append(added, piece{rawStart: start, rawEnd: start + int64(n), text: text, chars: utf8.RuneCountInString(text)})
		raw, start = raw[n:], start+int64(n)
	}
	if len(added) > 0 {
		v.rawEnd = added[len(added)-1].rawEnd
	} else if lost {
		v.rawEnd = start
	}
	oldChars := v.chars
	v.pieces = append(v.pieces, added...)
	for _, p := range added {
		v.chars += p.chars
	}
	drop := v.trim()
	newChars := v.chars - (oldChars - drop)
	switch {
	case len(added) == 0 && !lost && drop == 0:
		return update{}
	case !v.published || lost || newChars < 0 || drop > oldChars:
		v.published = true
		return update{kind: "replace", text: v.text()}
	case drop == 0 && newChars == 0:
		return update{}
	}
	// The text appended is the last newChars characters of the view.
	t := v.text()
	i := len(t)
	for k := 0; k < newChars; k++ {
		_, size := utf8.DecodeLastRuneInString(t[:i])
		i -= size
	}
	if drop == 0 {
		return update{kind: "append", text: t[i:]}
	}
	return update{kind: "slide", drop: drop, text: t[i:]}
}

// trim drops characters from the front until the view is at most cap
// characters: whole pieces (the view then starts at a line) while one
// goes whole or nearly (within lineSlack characters of what must go),
// else the first piece's first characters. It returns the characters
// dropped.
func (v *view) trim() int {
	dropped := 0
	for v.chars > v.cap && len(v.pieces) > 0 {
		p := &v.pieces[0]
		excess := v.chars - v.cap
		if len(v.pieces) > 1 && p.chars <= excess+lineSlack {
			v.chars -= p.chars
			dropped += p.chars
			v.pieces = v.pieces[1:]
			continue
		}
		i := 0
		for k := 0; k < excess; k++ {
			_, size := utf8.DecodeRuneInString(p.text[i:])
			i += size
		}
		p.text, p.chars = p.text[i:], p.chars-excess
		v.chars -= excess
		dropped += excess
	}
	return dropped
}

// lineSlack is how many characters short of its cap a view may be left
// so that it starts at a line.
const lineSlack = 512

// text is the view's text.
func (v *view) text() string {
	var b bytes.Buffer
	for _, p := range v.pieces {
		b.WriteString(p.text)
	}
	return b.String()
}

// rawStart is the raw offset the view's text starts at.
func (v *view) rawStart() int64 {
	if len(v.pieces) == 0 {
		return v.rawEnd
	}
	return v.pieces[0].rawStart
}

// set makes text the consumer's view (a final replace).
func (v *view) set(text string) {
	v.pieces = []piece{{rawStart: v.rawEnd, rawEnd: v.rawEnd, text: text, chars: utf8.RuneCountInString(text)}}
	v.chars = v.pieces[0].chars
	v.published = true
}
