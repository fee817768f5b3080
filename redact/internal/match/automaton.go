package match

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/capwrap/capwrap/redact/internal/scan"
)

// automaton is an Aho–Corasick machine over ASCII-case-folded bytes: it finds
// every occurrence of every keyword, overlapping ones included, and its state
// is a single int32, so a caller can carry it from one write to the next.
//
// Keywords are matched case-insensitively by the machine; a keyword that must
// match exactly is verified by the caller against the original bytes. The
// machine knows nothing of secrets, markers or streams.
//
// Speed comes from the pair table: while the machine is in its root state it
// skips every position whose two bytes cannot begin a keyword (case variants
// of a case-sensitive keyword excluded), which on ordinary text is nearly all
// of them, and runs the transition table only from the others.
type automaton struct {
	class  [256]uint8 // byte → input class; 0 for bytes in no keyword
	nclass int
	delta  []int32 // state*nclass + class → next state (complete DFA)
	depth  []int32 // length of the longest keyword prefix a state stands for
	// What the end of the input must keep back (see holdBack): for each
	// state, the keywords whose spans may start at the keyword and that
	// pass through it (a partial "curl" or "token" may be released, a
	// partial "ghp_" not), and the failure links to shorter suffixes.
	holdKw [][]int32
	fail   []int32
	kws    [][]byte
	exact  []bool
	hasOut []bool  // the state ends at least one keyword
	outOff []int32 // keywords ending at state s: outs[outOff[s]:outOff[s+1]]
	outs   []int32
	tri    [1024]uint64 // hash3 of the first three bytes of every keyword (shorter ones: all extensions)
	short  [1024]uint64 // the same, for keywords shorter than five bytes only
	quint  [1024]uint64 // hash5 of the first five bytes of keywords of five bytes or more
	maxLen int          // longest keyword, in bytes
	ted    *teddyLater  // the vector prefilter's tables, built in the background once needed; nil: scalar only (see prefilter)
	// The check of the vector prefilter's survivors (see quadOK): hash4 of
	// the first four bytes of every keyword of four bytes or more, and
	// hash3 of the three-byte keywords, both with 0x20 ORed into every
	// byte (a fold to lower case that also folds some other bytes
	// together, which only lets more through). quadAll: a keyword of one
	// or two bytes, which the check cannot judge, so it lets all through.
	quad, short3 [1024]uint64
	short3First  [256]uint64 // 1 for the first bytes (ORed with 0x20) of the three-byte keywords, else 0
	quadAll      bool
}

// caseVariants returns the bytes whose lower case (scan.Lower) is c's, or c
// alone if exact.
func caseVariants(c byte, exact bool) []byte {
	f := scan.Lower(c)
	if exact || f < 'a' || f > 'z' {
		return []byte{c}
	}
	return []byte{f, f - 'a' + 'A'}
}

// newAutomaton builds the machine for kws; exact[i] tells whether kws[i] is
// case-sensitive (which only narrows the pair table), after[i] whether no
// span found from kws[i] starts before the keyword's end (nil: none is).
// Keywords must not be empty. The keyword index reported by outputs is the
// index in kws.
func newAutomaton(kws [][]byte, exact, after []bool) *automaton {
	a := &automaton{kws: kws, exact: exact}
	a.classes(kws)
	a.link(a.trie(kws, after))
	a.filters(kws, exact)
	if haveTeddy {
		a.ted = buildTeddy(kws, exact)
	}
	return a
}

// classes numbers the bytes of kws, ASCII case folded, from 1 (0: a byte in
// no keyword).
func (a *automaton) classes(kws [][]byte) {
	var seen [256]bool
	for _, k := range kws {
		for _, c := range k {
			seen[scan.Lower(c)] = true
		}
		if len(k) > a.maxLen {
			a.maxLen = len(k)
		}
	}
	n := 1
	for c := 0; c < 256; c++ {
		if seen[c] {
			a.class[c] = uint8(n)
			n++
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		a.class[c] = a.class[c+'a'-'A']
	}
	a.nclass = n
}

// trie is the keyword trie the automaton starts from: delta with -1 for a
// missing edge, and per state its depth, the keywords that end there and
// those that hold it back (see automaton.holdKw).
type trie struct {
	delta        []int32
	depth        []int32
	outs, holdKw [][]int32
}

// trie builds the trie of kws over a's classes. It has at most one state
// per keyword byte, plus the root.
func (a *automaton) trie(kws [][]byte, after []bool) *trie {
	n := a.nclass
	most := 1
	for _, k := range kws {
		most += len(k)
	}
	t := &trie{
		delta:  make([]int32, n, most*n),
		depth:  make([]int32, 1, most),
		outs:   make([][]int32, 1, most),
		holdKw: make([][]int32, 1, most),
	}
	for i := range t.delta {
		t.delta[i] = -1
	}
	for ki, k := range kws {
		s := int32(0)
		hk := after == nil || !after[ki]
		for _, c := range k {
			cl := int(a.class[scan.Lower(c)])
			nx := t.delta[int(s)*n+cl]
			if nx < 0 {
				nx = int32(len(t.depth))
				for i := 0; i < n; i++ {
					t.delta = append(t.delta, -1)
				}
				t.depth = append(t.depth, t.depth[s]+1)
				t.outs = append(t.outs, nil)
				t.holdKw = append(t.holdKw, nil)
				t.delta[int(s)*n+cl] = nx
			}
			s = nx
			if hk {
				t.holdKw[s] = append(t.holdKw[s], int32(ki))
			}
		}
		t.outs[s] = append(t.outs[s], int32(ki))
	}
	return t
}

// link makes a the machine of trie tr: breadth-first failure links,
// completing tr's delta into a DFA as it goes, and the keywords each state
// ends (its own and those of its failure links).
func (a *automaton) link(tr *trie) {
	n := a.nclass
	delta, outs := tr.delta, tr.outs
	ns := len(tr.depth)
	fail := make([]int32, ns)
	queue := make([]int32, 0, ns)
	for cl := 0; cl < n; cl++ {
		t := delta[cl]
		if t < 0 {
			delta[cl] = 0
			continue
		}
		fail[t] = 0
		queue = append(queue, t)
	}
	for qi := 0; qi < len(queue); qi++ {
		s := queue[qi]
		outs[s] = append(outs[s], outs[fail[s]]...)
		for cl := 0; cl < n; cl++ {
			t := delta[int(s)*n+cl]
			if t < 0 {
				delta[int(s)*n+cl] = delta[int(fail[s])*n+cl]
				continue
			}
			fail[t] = delta[int(fail[s])*n+cl]
			queue = append(queue, t)
		}
	}
	a.delta = delta
	a.depth = tr.depth
	a.holdKw, a.fail = tr.holdKw, fail
	a.hasOut = make([]bool, ns)
	a.outOff = make([]int32, ns+1)
	for s := 0; s < ns; s++ {
		a.outOff[s] = int32(len(a.outs))
		a.outs = append(a.outs, outs[s]...)
		a.hasOut[s] = len(outs[s]) > 0
	}
	a.outOff[ns] = int32(len(a.outs))
}

// filters fills the tables of the scalar filter (see mark) and of the
// check of the vector prefilter's survivors (see quadOK).
func (a *automaton) filters(kws [][]byte, exact []bool) {
	for ki, k := range kws {
		a.mark(k, exact[ki])
		switch {
		case len(k) >= 4:
			setBit(&a.quad, hash4(binary.LittleEndian.Uint32(k)|0x20202020))
		case len(k) == 3:
			setBit(&a.short3, hash4(uint32(k[0])|uint32(k[1])<<8|uint32(k[2])<<16|0x202020))
			a.short3First[k[0]|0x20] = 1
		default:
			a.quadAll = true
		}
	}
}

// holdBack returns how many bytes at the end of b, the input up to the
// machine's state st, may begin a keyword whose spans may start at it: the
// longest suffix that is a prefix of one, in its exact case for an exact
// keyword (a lower-case "o" does not begin "OTk").
func (a *automaton) holdBack(st int32, b []byte) int {
	for s := st; s != 0; s = a.fail[s] {
		d := int(a.depth[s])
		for _, k := range a.holdKw[s] {
			if !a.exact[k] || string(b[len(b)-d:]) == string(a.kws[k][:d]) {
				return d
			}
		}
	}
	return 0
}

// holdsPublic reports whether every keyword that a suffix of b, the input
// up to state st, may begin (those holdBack counts) has a Detector: held
// back, such a suffix is a prefix of public text, never of a literal
// secret.
func (a *automaton) holdsPublic(st int32, b []byte, kws []Keyword) bool {
	for s := st; s != 0; s = a.fail[s] {
		d := int(a.depth[s])
		for _, k := range a.holdKw[s] {
			if a.exact[k] && string(b[len(b)-d:]) != string(a.kws[k][:d]) {
				continue
			}
			if kws[k].Det == nil {
				return false
			}
		}
	}
	return true
}

// outputs returns the indexes of the keywords that end in state st.
func (a *automaton) outputs(st int32) []int32 {
	return a.outs[a.outOff[st]:a.outOff[st+1]]
}

func setBit(t *[1024]uint64, h uint32) { t[h>>6] |= 1 << (h & 63) }

func hasBit(t *[1024]uint64, h uint32) bool { return t[h>>6]&(1<<(h&63)) != 0 }

// hash3 hashes the three bytes t holds (little-endian) to 16 bits.
func hash3(t uint32) uint32 { return (t & 0xffffff) * 0x9E3779B1 >> 16 }

// hash4 hashes the four bytes t holds to 16 bits.
func hash4(t uint32) uint32 { return t * 0x9E3779B1 >> 16 }

// quadOK reports whether a keyword may start at b[i] by the four bytes
// there (three for the three-byte keywords), folded with 0x20; true when
// fewer than four bytes follow. It is cheaper than mayStart and stricter
// than the vector prefilter, whose buckets let through a few percent of a
// log's positions with the catalogue's several hundred fingerprints.
func (a *automaton) quadOK(b []byte, i int) bool {
	if a.quadAll || i+4 > len(b) {
		return true
	}
	return a.quadBit(binary.LittleEndian.Uint32(b[i:])) != 0
}

// quadBit is quadOK for the four bytes x holds (little-endian), without a
// branch: 1 if a keyword may start with them, else 0.
func (a *automaton) quadBit(x uint32) uint64 {
	x |= 0x20202020
	h, h3 := hash4(x), hash4(x&0xffffff)
	return a.quad[h>>6]>>(h&63)&1 | a.short3First[byte(x)]&(a.short3[h3>>6]>>(h3&63))
}

// hash5 hashes the five bytes t holds (little-endian) to 16 bits.
func hash5(t uint64) uint32 { return uint32((t & 0xffffffffff) * 0x9E3779B97F4A7C15 >> 48) }

// mark records keyword k in the filter tables.
func (a *automaton) mark(k []byte, exact bool) {
	if len(k) == 1 {
		for i := range a.tri {
			a.tri[i] = ^uint64(0)
			a.short[i] = ^uint64(0)
		}
		return
	}
	var vs [5][]byte
	for j := 0; j < 5; j++ {
		if j < len(k) {
			vs[j] = caseVariants(k[j], exact)
		}
	}
	if len(k) == 2 {
		vs[2] = make([]byte, 256)
		for i := range vs[2] {
			vs[2][i] = byte(i)
		}
	}
	for _, b0 := range vs[0] {
		for _, b1 := range vs[1] {
			for _, b2 := range vs[2] {
				t := uint32(b0) | uint32(b1)<<8 | uint32(b2)<<16
				setBit(&a.tri, hash3(t))
				if len(k) < 5 {
					setBit(&a.short, hash3(t))
					continue
				}
				for _, b3 := range vs[3] {
					for _, b4 := range vs[4] {
						setBit(&a.quint, hash5(uint64(t)|uint64(b3)<<24|uint64(b4)<<32))
					}
				}
			}
		}
	}
}

// prefilter holds the vector prefilter's verdicts on b[from:to] (see
// teddy.go), checked further: pos lists, in increasing order, every
// position in [from, to) that the vector pass let through and that quadOK
// and mayStart accept. It is filled for the bytes one call of stream.feed
// scans and is valid while b is not changed.
type prefilter struct {
	masks    []uint32 // room for the vector pass's masks
	pos      []int32
	next     int // index in pos of the first position not yet returned by skip
	from, to int
}

// fill judges b[from:] with the vector prefilter, or leaves pf empty when
// the automaton has none.
func (pf *prefilter) fill(a *automaton, b []byte, from int) {
	pf.pos = pf.pos[:0]
	pf.next = 0
	pf.from, pf.to = from, from
	ted := a.ted.get(len(b) - from)
	if ted == nil || from >= len(b) {
		return
	}
	if need := (len(b)-from)/32 + 1; cap(pf.masks) < need {
		pf.masks = make([]uint32, need)
	}
	n := teddyMasks(ted, b[from:], pf.masks[:cap(pf.masks)])
	pf.to = from + 32*n
	pf.refine(a, b, pf.masks[:n])
}

// refine lists the positions of masks (the vector pass's verdicts on the
// blocks from pf.from on) that quadOK and then mayStart accept. The vector
// pass lets through a few percent of a log's positions, most of which
// quadOK rejects; judging them here, quadOK in a loop without
// data-dependent branches, costs a fraction of what testing each one where
// skip reaches it did (a mispredicted branch per survivor, and a walk over
// every mask).
func (pf *prefilter) refine(a *automaton, b []byte, masks []uint32) {
	for k, m := range masks {
		if m == 0 {
			continue
		}
		at := pf.from + 32*k
		keep := m
		if a.quadAll {
			// A one- or two-byte keyword: quadOK cannot judge.
		} else if at+32+7 <= len(b) {
			// Eight bytes follow every position of the block: quadOK and
			// then mayStart, each in a loop without data-dependent
			// branches (a quarter of quadOK's survivors fail mayStart on a
			// keyword-dense log, a branch mispredicted as often).
			keep = 0
			for ; m != 0; m &= m - 1 {
				j := bits.TrailingZeros32(m)
				keep |= uint32(a.quadBit(binary.LittleEndian.Uint32(b[at+j:]))) << j
			}
			m, keep = keep, 0
			for ; m != 0; m &= m - 1 {
				j := bits.TrailingZeros32(m)
				keep |= uint32(a.startBit(binary.LittleEndian.Uint64(b[at+j:]))) << j
			}
			for ; keep != 0; keep &= keep - 1 {
				pf.pos = append(pf.pos, int32(at+bits.TrailingZeros32(keep)))
			}
			continue
		} else {
			keep = 0
			for ; m != 0; m &= m - 1 {
				j := bits.TrailingZeros32(m)
				if a.quadOK(b, at+j) {
					keep |= 1 << j
				}
			}
		}
		for ; keep != 0; keep &= keep - 1 {
			if p := at + bits.TrailingZeros32(keep); a.mayStart(b, p) {
				pf.pos = append(pf.pos, int32(p))
			}
		}
	}
}

// scan runs the machine from state st over b[i:] and stops just after the
// first byte that leads to a state ending some keyword, or at len(b). It
// returns the state reached and the index of the next unread byte.
//
// In the root state it skips every position where no keyword can begin (see
// skip and mayStart). That is exact, not a heuristic: a skipped
// position can only have begun a case-mismatched exact keyword, which the
// caller rejects anyway, and the machine restarted in the root state at the
// next possible start finds every match the full machine would.
func (a *automaton) scan(st int32, b []byte, i int, pf *prefilter) (int32, int) {
	n := a.nclass
	// left is where the machine last left the root state, a position
	// where mayStart is true (skip returns no other), or -1: unknown.
	left := -1
	for i < len(b) {
		if st == 0 {
			i = a.skip(b, i, pf)
			if i == len(b) {
				return 0, i
			}
			left = i
		}
		st = a.delta[int(st)*n+int(a.class[b[i]])]
		i++
		if a.hasOut[st] {
			return st, i
		}
		// Back to skipping as soon as none of the bytes the state stands
		// for can begin a keyword after all (the filter tables look further
		// ahead than the machine's first steps).
		if d := int(a.depth[st]); d <= 4 && i < len(b) && i-d != left {
			// (When the bytes the state stands for start where the
			// machine left the root, mayStart is true there already.)
			reset := true
			for p := i - d; p < i; p++ {
				if a.mayStart(b, p) {
					reset = false
					break
				}
			}
			if reset {
				st = 0
			}
		}
	}
	return st, i
}

// skip returns the first position at or after i where a keyword may start
// (see mayStart), or a position among the last two bytes of b, which cannot
// be judged and are left to the machine, or len(b). Positions pf covers are
// taken from its list (see prefilter.refine); the others (all of them on
// CPUs without a vector prefilter) are tested eight per step against the
// three-byte table.
func (a *automaton) skip(b []byte, i int, pf *prefilter) int {
	if i >= pf.from && i < pf.to {
		if pf.next > 0 && int(pf.pos[pf.next-1]) >= i {
			// Asked again for an earlier position (scan moves forward
			// only, but be exact whatever the caller).
			pf.next, _ = slices.BinarySearch(pf.pos, int32(i))
		}
		for pf.next < len(pf.pos) && int(pf.pos[pf.next]) < i {
			pf.next++
		}
		if pf.next < len(pf.pos) {
			p := int(pf.pos[pf.next])
			pf.next++
			return p
		}
		i = pf.to
	}
	for i+10 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		b8, b9 := uint32(b[i+8]), uint32(b[i+9])
		h0 := hash3(uint32(w))
		h1 := hash3(uint32(w >> 8))
		h2 := hash3(uint32(w >> 16))
		h3 := hash3(uint32(w >> 24))
		h4 := hash3(uint32(w >> 32))
		h5 := hash3(uint32(w >> 40))
		h6 := hash3(uint32(w>>48) | b8<<16)
		h7 := hash3(uint32(w>>56) | b8<<8 | b9<<16)
		m := a.tri[h0>>6]>>(h0&63)&1 | a.tri[h1>>6]>>(h1&63)&1<<1 |
			a.tri[h2>>6]>>(h2&63)&1<<2 | a.tri[h3>>6]>>(h3&63)&1<<3 |
			a.tri[h4>>6]>>(h4&63)&1<<4 | a.tri[h5>>6]>>(h5&63)&1<<5 |
			a.tri[h6>>6]>>(h6&63)&1<<6 | a.tri[(h7>>6)&1023]>>(h7&63)&1<<7
		for m != 0 {
			j := bits.TrailingZeros64(m)
			m &= m - 1
			if a.confirm(b, i+j) {
				return i + j
			}
		}
		i += 8
	}
	for ; i+3 <= len(b); i++ {
		if a.mayStart(b, i) {
			return i
		}
	}
	return i
}

// mayStart reports whether a keyword may start at b[i]. It is never false
// for a position where one does (hash collisions only make it true more
// often), and it is true when too few bytes follow to judge.
func (a *automaton) mayStart(b []byte, i int) bool {
	if i+3 > len(b) {
		return true
	}
	t := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16
	return hasBit(&a.tri, hash3(t)) && a.confirm(b, i)
}

// startBit is mayStart for the first five bytes of x (little-endian), without
// a branch: 1 if a keyword may start with them, else 0.
func (a *automaton) startBit(x uint64) uint64 {
	h3 := hash3(uint32(x))
	h5 := hash5(x)
	return a.tri[h3>>6] >> (h3 & 63) & (a.short[h3>>6]>>(h3&63) | a.quint[h5>>6]>>(h5&63)) & 1
}

// confirm is mayStart for a position i+3 <= len(b) whose three bytes passed
// the tri table.
func (a *automaton) confirm(b []byte, i int) bool {
	t := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16
	if hasBit(&a.short, hash3(t)) || i+5 > len(b) {
		return true
	}
	return hasBit(&a.quint, hash5(uint64(t)|uint64(b[i+3])<<24|uint64(b[i+4])<<32))
}
