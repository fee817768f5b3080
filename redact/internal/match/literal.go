package match

import (
	"encoding/binary"
	"math/bits"
)

// Literals: the keywords that are exact, have no Detector and are at least
// MinLiteral bytes long (a secret's value and its encoded forms) are not
// states of the keyword automaton, whose dense transition table costs
// several hundred bytes per keyword byte (64 KiB of environment values made
// it 370 MB): they are looked up by hash instead. Each one of 8 bytes or
// more is keyed by its first 8 bytes in a map, a shorter one by all its
// bytes in another; a 64 Kibit table of first byte pairs (or the vector
// prefilter, or a rare byte of the head when there are few long ones and
// no short ones) finds the positions worth a lookup, and a hashed bit set
// of their proper prefixes of 2 to 7 bytes tells whether the last bytes of
// the input may begin one. Memory is about
// the literals' own bytes plus a few dozen bytes each; time per input byte
// does not grow with their length.
//
// A literal longer than MaxLiteral bytes is matched by its first MaxLiteral
// bytes: where they occur, the span is those bytes, and it grows over the
// following bytes as long as they continue the literal, up to its whole
// length (an open span, dropped as it arrives). A whole occurrence is thus
// masked whole, one cut short after its first MaxLiteral bytes is masked as
// far as it goes, and no more than MaxLiteral bytes are ever held back for
// a literal.

const (
	// MinLiteral is the length, in bytes, from which an exact keyword
	// without a Detector is a literal looked up by hash (one-byte ones are
	// states of the automaton).
	MinLiteral = 2
	// headLen is the length of a literal's head, the key of a long one.
	headLen = 8
	// MaxLiteral is the number of leading bytes by which a longer literal
	// is found (see above): it bounds the bytes held back for literals.
	MaxLiteral = 4096
	// litVector is the most literals the vector prefilter is built for
	// (its bucket choice is quadratic in their number); with more, the
	// byte-pair table alone filters.
	litVector = 256
)

// litKw is one keyword of a litSet.
type litKw struct {
	text []byte // the first MaxLiteral bytes at most: what a match needs
	rest []byte // the bytes past text, which an open span grows over
	kind int32
}

// litSet is the immutable, shared part of the literal lookup.
type litSet struct {
	lits   []litKw
	byHead map[uint64][]int32 // first 8 bytes → indexes in lits (those of 8 bytes or more)
	heads  []head             // one per byHead key
	short  map[uint64][]int32 // the literals shorter than 8 bytes, by hashPrefix's packing
	lens   []int              // the lengths of the short literals, each once
	pair   [1024]uint64       // first two bytes of every literal
	quad   *[4096]uint64      // first four bytes of every literal, by hashQuad
	short3 bool               // a literal of 2 or 3 bytes, which quad cannot judge
	prefix *[2048]uint64      // every proper prefix of 2 to 7 bytes, by hashPrefix
	first  [256]bool          // every first byte
	maxLen int                // longest text
	ted    *teddyLater        // nil: no vector prefilter
}

// hashQuad hashes the four bytes x holds to 18 bits.
func hashQuad(x uint32) uint32 { return x * 0x9E3779B1 >> 14 }

// packShort packs b (at most 7 bytes) and its length in a uint64.
func packShort(b []byte) uint64 {
	var x uint64
	for i, c := range b {
		x |= uint64(c) << (8 * i)
	}
	return x | uint64(len(b))<<56
}

// hashPrefix hashes b (at most 7 bytes) and its length to 17 bits.
func hashPrefix(b []byte) uint32 {
	return uint32(packShort(b) * 0x9E3779B97F4A7C15 >> 47)
}

// newLitSet returns the lookup for lits, or nil when there are none.
func newLitSet(lits []litKw) *litSet {
	if len(lits) == 0 {
		return nil
	}
	l := &litSet{lits: lits, byHead: map[uint64][]int32{}, short: map[uint64][]int32{}, prefix: new([2048]uint64), quad: new([4096]uint64)}
	var lens [headLen]bool
	for i, lt := range lits {
		if len(lt.text) < headLen {
			k := packShort(lt.text)
			l.short[k] = append(l.short[k], int32(i))
			lens[len(lt.text)] = true
		} else {
			h := binary.LittleEndian.Uint64(lt.text)
			if _, ok := l.byHead[h]; !ok {
				l.heads = append(l.heads, newHead(lt.text))
			}
			l.byHead[h] = append(l.byHead[h], int32(i))
		}
		x := uint32(lt.text[0]) | uint32(lt.text[1])<<8
		l.pair[x>>6] |= 1 << (x & 63)
		if len(lt.text) >= 4 {
			h := hashQuad(binary.LittleEndian.Uint32(lt.text))
			l.quad[h>>6] |= 1 << (h & 63)
		} else {
			l.short3 = true
		}
		l.first[lt.text[0]] = true
		for n := 2; n < min(len(lt.text), headLen); n++ {
			h := hashPrefix(lt.text[:n])
			l.prefix[h>>6] |= 1 << (h & 63)
		}
		l.maxLen = max(l.maxLen, len(lt.text))
	}
	for n, ok := range lens {
		if ok {
			l.lens = append(l.lens, n)
		}
	}
	if haveTeddy() && (len(l.heads) > fewHeads || len(l.lens) > 0) && len(lits) <= litVector {
		kws := make([][]byte, len(lits))
		exact := make([]bool, len(lits))
		for i, lt := range lits {
			kws[i], exact[i] = lt.text, true
		}
		l.ted = buildTeddy(kws, exact)
	}
	return l
}

// mayBegin reports whether b, shorter than 8 bytes, may begin a literal
// longer than b: never false when one does (a hash collision may make it
// true when none does, which only holds b back until more input decides).
func (l *litSet) mayBegin(b []byte) bool {
	if len(b) == 1 {
		return l.first[b[0]]
	}
	h := hashPrefix(b)
	return l.prefix[h>>6]&(1<<(h&63)) != 0
}

// scanLits checks the positions from lscan on against every literal,
// adding a span for each occurrence, up to the first that cannot be
// decided yet, where it leaves lscan (s.pos when all were checked). It
// must run before growOpen, which grows a long literal's span over the
// bytes that arrived after it.
func (s *stream) scanLits() int64 {
	l := s.m.lits
	if l == nil {
		s.lscan = s.pos
		return s.pos
	}
	b := s.buf[:s.pos-s.base]
	p := int(s.lscan - s.base)
	stop := func(q int) int64 {
		s.lscan = s.base + int64(q)
		return s.lscan
	}
	if len(l.heads) <= fewHeads && len(l.lens) == 0 {
		for {
			q := -1
			for i := range l.heads {
				if n := l.heads[i].next(b, p); n >= 0 && (q < 0 || n < q) {
					q = n
				}
			}
			if q < 0 {
				break
			}
			if !s.litAt(b, q) {
				return stop(q)
			}
			p = q + 1
		}
		// From here on no head fits whole: only the last bytes remain.
		p = max(p, len(b)-headLen+1)
	} else if t := l.ted.get(len(b) - p); t != nil && s.m.vector && p < len(b) {
		if need := (len(b)-p)/32 + 1; cap(s.litMasks) < need {
			s.litMasks = make([]uint32, need)
		}
		n := teddyMasks(t, b[p:], s.litMasks[:cap(s.litMasks)])
		for blk := 0; blk < n; blk++ {
			for m := s.litMasks[blk]; m != 0; m &= m - 1 {
				q := p + 32*blk + bits.TrailingZeros32(m)
				if !s.litAt(b, q) {
					return stop(q)
				}
			}
		}
		p += 32 * n
	}
	if !l.short3 {
		// Every literal has four bytes: judge a position by them.
		for ; p+4 <= len(b); p++ {
			h := hashQuad(binary.LittleEndian.Uint32(b[p:]))
			if l.quad[h>>6]&(1<<(h&63)) != 0 && !s.litAt(b, p) {
				return stop(p)
			}
		}
	}
	for ; p < len(b); p++ {
		if p+1 < len(b) {
			x := uint32(b[p]) | uint32(b[p+1])<<8
			if l.pair[x>>6]&(1<<(x&63)) == 0 {
				continue
			}
		}
		if !s.litAt(b, p) {
			return stop(p)
		}
	}
	return stop(len(b))
}

// litAt checks for literals at b[p:] (b ends at the stream's pos), adding
// a span for each one found. It returns false when one may start at p but
// b ends before it could be decided.
func (s *stream) litAt(b []byte, p int) bool {
	l := s.m.lits
	if p+headLen > len(b) && !s.eof && l.mayBegin(b[p:]) {
		return false
	}
	for _, n := range l.lens {
		if p+n > len(b) {
			break
		}
		for _, i := range l.short[packShort(b[p:p+n])] {
			s.addLit(p, &l.lits[i])
		}
	}
	if p+headLen > len(b) {
		return true
	}
	for _, i := range l.byHead[binary.LittleEndian.Uint64(b[p:])] {
		lt := &l.lits[i]
		if p+len(lt.text) > len(b) {
			if !s.eof && string(b[p:]) == string(lt.text[:len(b)-p]) {
				return false
			}
			continue
		}
		if string(b[p:p+len(lt.text)]) == string(lt.text) {
			s.addLit(p, lt)
		}
	}
	return true
}

// addLit adds the span of literal lt at b[p:].
func (s *stream) addLit(p int, lt *litKw) {
	at := s.base + int64(p)
	sp := span{s: at, e: at + int64(len(lt.text)), kind: lt.kind}
	if len(lt.rest) > 0 {
		sp.ext = Extender{Mode: extLit, lit: lt.rest, limit: sp.e + int64(len(lt.rest))}
	}
	s.addSpan(sp)
}
