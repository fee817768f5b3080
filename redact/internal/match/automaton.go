package match

import (
	"encoding/binary"
	"math/bits"

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
// A long write is not run through the machine byte by byte: the
// prefilter (the vector pass, or the scalar filter's hashed three-byte
// table) finds the few positions where a keyword may begin, and each is
// compared with its candidate keywords directly (direct.go). The machine
// runs over a short write, over the first bytes of a long one for the
// keywords that began before it, and over the last bytes of a long one
// for the state that holdBack reads (see stream.feed).
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
	dir    *direct      // the keywords by their first bytes, for the direct check of skip's positions (direct.go)
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
	a.dir = newDirect(kws, exact)
	if haveTeddy() {
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

// filters fills the tables of the scalar filter (see mark).
func (a *automaton) filters(kws [][]byte, exact []bool) {
	for ki, k := range kws {
		a.mark(k, exact[ki])
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
// position in [from, to) that the vector pass let through and that
// direct.may accepts. It is filled for the bytes one call of stream.feed
// scans and is valid while b is not changed.
type prefilter struct {
	masks    []uint32 // room for the vector pass's masks
	pos      []int32
	from, to int
}

// fill judges b[from:] with the vector prefilter, or leaves pf empty when
// the automaton has none.
func (pf *prefilter) fill(a *automaton, b []byte, from int) {
	pf.pos = pf.pos[:0]
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
// blocks from pf.from on) where a keyword may begin by its first bytes
// (direct.keep). The vector pass lets through a few percent of a log's
// positions (one or two per block of 32 on a keyword-dense log), most of
// which that check rejects. Where eight bytes follow every position of two
// blocks, their 64 positions are judged in one loop without a
// data-dependent branch (keep); a loop per block and per check, as before,
// mispredicted its exit two or three times per block.
func (pf *prefilter) refine(a *automaton, b []byte, masks []uint32) {
	d := a.dir
	k := 0
	if len(d.tiny) == 0 && len(b)-pf.from >= 64+7 { // (a keyword of one or two bytes: keep cannot judge)
		k = 2 * min(len(masks)/2, (len(b)-pf.from-64-7)/64+1)
		pf.pos = d.keep(b, pf.from, masks[:k], pf.pos)
	}
	for ; k < len(masks); k++ {
		at := pf.from + 32*k
		for m := masks[k]; m != 0; m &= m - 1 {
			if p := at + bits.TrailingZeros32(m); d.mayAt(b, p) {
				pf.pos = append(pf.pos, int32(p))
			}
		}
	}
}

// skip returns the first position at or after i where a keyword may start
// (see mayStart), or a position among the last two bytes of b, which cannot
// be judged, or len(b): the scalar filter, for the positions the vector
// prefilter does not cover (all of them on CPUs without one). It tests
// eight positions per step against the three-byte table.
func (a *automaton) skip(b []byte, i int) int {
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

// confirm is mayStart for a position i+3 <= len(b) whose three bytes passed
// the tri table.
func (a *automaton) confirm(b []byte, i int) bool {
	t := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16
	if hasBit(&a.short, hash3(t)) || i+5 > len(b) {
		return true
	}
	return hasBit(&a.quint, hash5(uint64(t)|uint64(b[i+3])<<24|uint64(b[i+4])<<32))
}
