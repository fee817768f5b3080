package match

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/capwrap/capwrap/redact/internal/scan"
)

// The direct check. The prefilter (the vector pass and keep, see
// prefilter.refine, or the scalar filter, skip) yields the few positions
// where a keyword may begin; each one is compared at once with the
// keywords that may begin there, looked up by its first four bytes,
// instead of running the automaton over the bytes that follow it (Rust's
// aho-corasick verifies Teddy's candidates the same way, against their
// bucket's patterns). On a keyword-dense log three in four of those
// positions begin a keyword, and the automaton took about six dependent
// table steps from each. The automaton still finds the keywords that
// began before a write's bytes and gives the state its hold needs (see
// stream.feed).

// kwCheck is one keyword as the direct check compares it: its bytes in
// little-endian 8-byte words, the first inline, a case-insensitive one's
// letters in lower case, each word compared with the input's ORed with
// its fold (0x20 at each such letter, else 0: a byte ORed with 0x20 is a
// lower-case letter only if it is that letter in either case).
type kwCheck struct {
	key    uint32 // the first four bytes ORed with 0x20 each (the first three for a three-byte keyword): what it is looked up by
	kw     int32  // index in the automaton's keywords
	n      int32  // length in bytes
	off    int32  // its second word in direct.words (text, then fold, per word), if it has one
	t0, f0 uint64 // its first word and that word's fold, zero-padded
	m0     uint64 // the bytes of its first word that are the keyword's
	last   uint64 // the same for its last word
}

// words is how many 8-byte words c's keyword takes.
func (c *kwCheck) words() int { return int(c.n+7) / 8 }

// eq reports whether b, at least c.n bytes, begins with c's keyword (in
// any ASCII case if it is case-insensitive); words are d.words.
func (c *kwCheck) eq(b []byte, words []uint64) bool {
	if len(b) < 8 {
		for i := 0; i < int(c.n); i++ {
			if sh := 8 * uint(i); b[i]|byte(c.f0>>sh) != byte(c.t0>>sh) {
				return false
			}
		}
		return true
	}
	return (binary.LittleEndian.Uint64(b)|c.f0)&c.m0 == c.t0 && (c.n <= 8 || c.eqRest(b, words))
}

// eqRest is eq for the bytes of a keyword longer than eight past its
// first eight, which the caller has compared.
func (c *kwCheck) eqRest(b []byte, words []uint64) bool {
	nw := c.words()
	ws := words[c.off : int(c.off)+2*(nw-1)]
	if len(b) < 8*nw {
		for i := 8; i < int(c.n); i++ {
			t, f := ws[2*(i/8-1)], ws[2*(i/8-1)+1]
			if sh := 8 * uint(i%8); b[i]|byte(f>>sh) != byte(t>>sh) {
				return false
			}
		}
		return true
	}
	for i := 1; i < nw-1; i++ {
		if binary.LittleEndian.Uint64(b[8*i:])|ws[2*i-1] != ws[2*i-2] {
			return false
		}
	}
	return (binary.LittleEndian.Uint64(b[8*(nw-1):])|ws[2*nw-3])&c.last == ws[2*nw-4]
}

// directSlots is the number of slots of the direct check's tables: more
// keep keys apart (a slot with several lets through whatever it holds the
// fifth byte of), fewer take less of the first-level cache.
const directSlots = 2048

// slotOf is the slot of key x: the top bits of hash4.
func slotOf(x uint32) uint32 { return hash4(x) * directSlots >> 16 }

// direct is the direct check's lookup: the keywords of four bytes or
// more by their first four bytes, those of three by theirs, each ORed with
// 0x20 (which only lets more through: eq decides), and those of one or two
// bytes, which every position is compared with.
type direct struct {
	slot4, slot3 [directSlots + 1]int32 // keywords hashed to slot h: by4[slot4[h]:slot4[h+1]]
	may4, may3   [directSlots]uint64    // per slot, for may: the key of its keywords, 0 if they have several (bits 0-31); fifthBit of their fifth bytes (may4, all for a four-byte keyword) or 1 (may3) in bits 32-63
	by4, by3     []kwCheck
	tiny         []kwCheck
	words        []uint64 // the keywords' words past their first (see kwCheck)
}

func newDirect(kws [][]byte, exact []bool) *direct {
	d := &direct{}
	var n4, n3 [directSlots + 1]int32
	checks := make([]kwCheck, len(kws))
	for ki, k := range kws {
		c := &checks[ki]
		*c = kwCheck{kw: int32(ki), n: int32(len(k)), off: int32(len(d.words))}
		var t, f uint64
		for i, ch := range k {
			sh := 8 * uint(i%8)
			if l := scan.Lower(ch); !exact[ki] && l >= 'a' && l <= 'z' {
				ch = l
				f |= 0x20 << sh
			}
			t |= uint64(ch) << sh
			if i%8 == 7 || i == len(k)-1 {
				if i < 8 {
					c.t0, c.f0 = t, f
				} else {
					d.words = append(d.words, t, f)
				}
				t, f = 0, 0
			}
		}
		c.last = ^uint64(0) >> (8 * uint(8*c.words()-len(k)))
		c.m0 = c.last
		if len(k) > 8 {
			c.m0 = ^uint64(0)
		}
		for i := 0; i < min(len(k), 4); i++ {
			c.key |= uint32(k[i]|0x20) << (8 * i)
		}
		switch h := slotOf(c.key); {
		case len(k) >= 4:
			n4[h+1]++
			fifth := uint64(0xffffffff)
			if len(k) > 4 {
				fifth = 1 << fifthBit(uint32(k[4]))
			}
			d.may4[h] = mayKey(d.may4[h], c.key) | fifth<<32
		case len(k) == 3:
			n3[h+1]++
			d.may3[h] = mayKey(d.may3[h], c.key) | 1<<32
		}
	}
	for h := 0; h < directSlots; h++ {
		d.slot4[h+1] = d.slot4[h] + n4[h+1]
		d.slot3[h+1] = d.slot3[h] + n3[h+1]
	}
	d.by4 = make([]kwCheck, d.slot4[directSlots])
	d.by3 = make([]kwCheck, d.slot3[directSlots])
	next4, next3 := d.slot4, d.slot3
	for _, c := range checks { // in keyword order within each slot
		switch h := slotOf(c.key); {
		case c.n >= 4:
			d.by4[next4[h]] = c
			next4[h]++
		case c.n == 3:
			d.by3[next3[h]] = c
			next3[h]++
		default:
			d.tiny = append(d.tiny, c)
		}
	}
	return d
}

// mayKey is the key bits of a slot of may4 or may3 whose bits were v,
// once a keyword with key is added to it: key for the first, 0 once a
// second key shares the slot.
func mayKey(v uint64, key uint32) uint64 {
	if v == 0 || uint32(v) == key {
		return v | uint64(key)
	}
	return v &^ 0xffffffff
}

// fifthBit is the bit of may4's bits 32-63 that stands for the low byte of
// x as the fifth byte of a keyword, in either case (ORed with 0x20, and its
// bits mixed, so that "PASSED" and "pass%" differ).
func fifthBit(x uint32) uint64 { // (of x's low byte, whatever the others)
	x |= 0x20
	return uint64(x^x>>3) & 31
}

// keep appends to pos each position at+32k+j, for the bits j of
// masks[k], where a keyword of three bytes or more may begin by the eight
// bytes there, in increasing order; b must hold 71 bytes from the start
// of every pair of masks (len(masks) is even). It keeps the positions
// where a keyword's key equals their first four bytes, ORed with 0x20 each
// (or a slot with several keys holds them), and their fifth byte is one of
// that slot's keywords' fifth bytes by fifthBit; or where the key of a
// three-byte keyword equals their first three. A position is never left
// out where a keyword begins in any case it matches. A key has 0x20 in
// every byte, so its bit 5 tells a slot with one key from one with several
// (0: any key passes); an empty slot has no fifth bytes. On a
// keyword-dense log this lets through about as few positions as the three
// checks before it did (three bytes, four, five, each hashed into a bit
// set), with two table loads instead of six, and without a data-dependent
// branch for the 64 positions of two masks: each is written, and kept by
// advancing pos's end by the verdict.
func (d *direct) keep(b []byte, at int, masks []uint32, pos []int32) []int32 {
	for k := 0; k+1 < len(masks); k, at = k+2, at+64 {
		m := uint64(masks[k]) | uint64(masks[k+1])<<32
		if m == 0 {
			continue
		}
		if cap(pos)-len(pos) < 64 {
			pos = slices.Grow(pos, 64)
		}
		n := len(pos)
		ps := pos[:cap(pos)]
		w := (*[64 + 7]byte)(b[at:]) // (no bounds check per position)
		for ; m != 0; m &= m - 1 {
			j := bits.TrailingZeros64(m) & 63
			x := binary.LittleEndian.Uint64(w[j : j+8])
			x4 := uint32(x) | 0x20202020
			x3 := x4 & 0xffffff
			v4, v3 := d.may4[slotOf(x4)], d.may3[slotOf(x3)]
			k4, k3 := uint32(v4), uint32(v3)
			ok4 := b2u((k4^x4)&-(k4>>5&1) == 0) & (v4 >> (32 + fifthBit(uint32(x>>32))))
			ok3 := b2u((k3^x3)&-(k3>>5&1) == 0) & (v3 >> 32)
			ps[n] = int32(at + j)
			n += int((ok4 | ok3) & 1)
		}
		pos = ps[:n]
	}
	return pos
}

// mayAt tells whether a keyword may begin at b[p] (see keep): true also
// when fewer than eight bytes follow it, or when a keyword has one or two
// bytes (keep cannot judge those).
func (d *direct) mayAt(b []byte, p int) bool {
	if len(d.tiny) > 0 || p+8 > len(b) {
		return true
	}
	var w [64 + 7]byte
	copy(w[:], b[p:p+8])
	var room [64]int32
	return len(d.keep(w[:], 0, []uint32{1, 0}, room[:0])) > 0
}

// b2u is 1 for true and 0 for false (the compiler makes it a SETcc).
func b2u(b bool) uint64 {
	var x uint64
	if b {
		x = 1
	}
	return x
}

// hit is a keyword occurrence the direct check found: b[start:end] is
// keyword kw.
type hit struct {
	start, end, kw int32
}

// at appends to hits every keyword that b[p:] begins and that ends within
// b. Where eight bytes follow p, each
// keyword of p's slots is compared by its first word without a branch and
// written to hits, kept by advancing their end: on a keyword-dense log
// nearly every position at is asked about begins a keyword, which one
// varies, and a branch on each comparison was mispredicted as often.
func (d *direct) at(b []byte, p int, hits []hit) []hit {
	if len(b)-p < 8 {
		return d.atEnd(b, p, hits)
	}
	w := binary.LittleEndian.Uint64(b[p:])
	x4 := uint32(w) | 0x20202020
	h4, h3 := slotOf(x4), slotOf(x4&0xffffff)
	by4, by3 := d.by4[d.slot4[h4]:d.slot4[h4+1]], d.by3[d.slot3[h3]:d.slot3[h3+1]]
	hits = slices.Grow(hits, len(by4)+len(by3))
	k := len(hits)
	hs := hits[:cap(hits)]
	for i := range by4 {
		c := &by4[i]
		ok := b2u((w|c.f0)&c.m0 == c.t0)
		if ok != 0 && c.n > 8 && !(int(c.n) <= len(b)-p && c.eqRest(b[p:], d.words)) {
			ok = 0
		}
		hs[k] = hit{int32(p), int32(p) + c.n, c.kw}
		k += int(ok)
	}
	for i := range by3 {
		c := &by3[i]
		hs[k] = hit{int32(p), int32(p) + 3, c.kw}
		k += int(b2u((w|c.f0)&c.m0 == c.t0))
	}
	if len(d.tiny) == 0 {
		return hs[:k]
	}
	return d.atTiny(b, p, hs[:k])
}

// atEnd is at for a position fewer than eight bytes before the end of b.
func (d *direct) atEnd(b []byte, p int, hits []hit) []hit {
	n := len(b) - p
	if n >= 4 {
		x := binary.LittleEndian.Uint32(b[p:]) | 0x20202020
		h := slotOf(x)
		for i := d.slot4[h]; i < d.slot4[h+1]; i++ {
			if c := &d.by4[i]; c.key == x && int(c.n) <= n && c.eq(b[p:], d.words) {
				hits = append(hits, hit{int32(p), int32(p) + c.n, c.kw})
			}
		}
	}
	if n >= 3 {
		x := (uint32(b[p]) | uint32(b[p+1])<<8 | uint32(b[p+2])<<16) | 0x202020
		h := slotOf(x)
		for i := d.slot3[h]; i < d.slot3[h+1]; i++ {
			if c := &d.by3[i]; c.key == x && c.eq(b[p:], d.words) {
				hits = append(hits, hit{int32(p), int32(p) + 3, c.kw})
			}
		}
	}
	return d.atTiny(b, p, hits)
}

// atTiny appends the keywords of one or two bytes that b[p:] begins.
func (d *direct) atTiny(b []byte, p int, hits []hit) []hit {
	for i := range d.tiny {
		if c := &d.tiny[i]; int(c.n) <= len(b)-p && c.eq(b[p:], d.words) {
			hits = append(hits, hit{int32(p), int32(p) + c.n, c.kw})
		}
	}
	return hits
}

// sortHits puts hits in the order the automaton reports them: by end,
// then by start (a longer keyword ending at the same byte first), then by
// keyword. They come nearly in that order (by start), so an insertion sort.
func sortHits(hits []hit) {
	less := func(a, b hit) bool {
		if a.end != b.end {
			return a.end < b.end
		}
		if a.start != b.start {
			return a.start < b.start
		}
		return a.kw < b.kw
	}
	for i := 1; i < len(hits); i++ {
		h := hits[i]
		j := i
		for ; j > 0 && less(h, hits[j-1]); j-- {
			hits[j] = hits[j-1]
		}
		hits[j] = h
	}
}
