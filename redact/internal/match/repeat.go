package match

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

// Repeats: the value of a span a detector decided (closed, so its bytes are
// final) is remembered when the caller's remember function says so (redact:
// a secret's value, SPEC §6 "a value identified once is a secret
// everywhere"), and every later occurrence of it is a span too, without its
// keyword, in the same stream and in the other streams that share the
// Memory.
//
// Within a stream the result does not depend on how the input is split: a
// value learned from a span that ends at stream offset e masks the
// occurrences that start at e or later, and no earlier ones. Values are
// taken in the order of their ends, once no span that ends earlier can
// still be found (the frontier has passed), so the bounded set is the same
// whatever the writes. Values learned by another stream mask what this one
// has not yet released when it sees them (that depends on timing between
// the streams, which nothing can fix).
//
// Bounds: at most MemoryValues values, each of MinValue bytes or more, and
// at most MemoryBytes bytes of them in all, first come first kept (a value
// that would pass MemoryBytes is not kept; a shorter later one may be); how
// long one value may be is remember's to bound.

const (
	// MinValue is the shortest value, in bytes, that is remembered: the
	// scanner keys values by their first 8 bytes (see head).
	MinValue = 8
	// MemoryValues bounds how many values a Memory, and each stream, keeps.
	MemoryValues = 256
	// MemoryBytes bounds the bytes of the values a Memory, and each
	// stream, keeps: 64 KiB, what 256 values of 256 bytes took when no
	// value could be longer (issue 27 let one be as long as MaxLiteral).
	MemoryBytes = 64 << 10
)

// Memory holds the values the Writers sharing it remembered, so that each
// masks what the others found (stdout and stderr of one command). It is
// safe for concurrent use. The zero value is not usable; call NewMemory.
type Memory struct {
	mu      sync.Mutex
	vals    []memValue
	size    int          // bytes of vals' values, at most MemoryBytes
	version atomic.Int64 // len(vals), read without the lock
}

type memValue struct {
	v    []byte
	kind int32
	by   *stream
}

// NewMemory returns an empty Memory to share between Writers (NewWriter).
func NewMemory() *Memory { return &Memory{} }

// Len returns how many values m holds, at most MemoryValues.
func (m *Memory) Len() int { return int(m.version.Load()) }

// publish adds v unless it is there or the memory is full.
func (m *Memory) publish(v []byte, kind int32, by *stream) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.vals) >= MemoryValues || m.size+len(v) > MemoryBytes {
		return
	}
	for _, o := range m.vals {
		if bytes.Equal(o.v, v) {
			return
		}
	}
	m.size += len(v)
	m.vals = append(m.vals, memValue{v: v, kind: kind, by: by})
	m.version.Store(int64(len(m.vals)))
}

// since returns the values from index n on.
func (m *Memory) since(n int) []memValue {
	if int(m.version.Load()) <= n {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.vals[n:])
}

// learnItem is a decided span's value waiting for the frontier to pass its end.
type learnItem struct {
	s, e int64
	kind int32
	v    []byte
}

// repValue is a value a stream masks, from stream offset from on.
type repValue struct {
	v    []byte
	kind int32
	from int64
}

// repeats is one stream's part: the values it masks and how far it looked.
type repeats struct {
	mem     *Memory
	memSeen int // values of mem already taken
	pend    []learnItem
	vals    []repValue
	size    int   // bytes of vals' values, at most MemoryBytes
	scan    int64 // every position before scan was checked against vals
	byHead  map[uint64][]int32
	heads   []head        // one per byHead key
	pair    *[1024]uint64 // first two bytes of each value
	maxLen  int
	ted     *teddyTables // the vector prefilter over vals' first bytes; rebuilt when dirty
	dirty   bool
	masks   []uint32
}

// learn records the value of a span a detector decided (closed, so its
// bytes are final; an open span's when it closes at its value's end, not
// at its bound), if remember wants it and the span is at most MaxLiteral
// bytes long (compact keeps an open span's bytes until then).
func (s *stream) learn(sp span) {
	if s.remember == nil || sp.e-sp.s < MinValue || sp.e-sp.s > MaxLiteral || sp.s < s.base {
		return
	}
	v := s.remember(StripDisplay(s.buf[sp.s-s.base : sp.e-s.base])) // a value coloured inside is remembered as shown
	if len(v) < MinValue {
		return
	}
	s.rep.pend = append(s.rep.pend, learnItem{s: sp.s, e: sp.e, kind: sp.kind, v: bytes.Clone(v)})
}

// repeatsSettle commits the values whose spans end before the frontier fc
// (in order of their ends), takes the values other streams published, and
// looks for every active value in the bytes not yet checked. It returns the
// first position still undecided (a possible partial occurrence at the end
// of the buffer), which bounds what may be released.
func (s *stream) repeatsSettle(fc int64) int64 {
	r := &s.rep
	if len(r.pend) > 0 {
		slices.SortFunc(r.pend, func(a, b learnItem) int {
			switch {
			case a.e != b.e:
				return cmp64(a.e, b.e)
			case a.s != b.s:
				return cmp64(a.s, b.s)
			}
			return int(a.kind - b.kind)
		})
		n := 0
		for _, it := range r.pend {
			if it.e > fc && !s.eof {
				break
			}
			n++
			if s.addValue(it.v, it.kind, it.e) && r.mem != nil {
				r.mem.publish(it.v, it.kind, s)
			}
		}
		r.pend = append(r.pend[:0], r.pend[n:]...)
	}
	if r.mem != nil {
		for _, mv := range r.mem.since(r.memSeen) {
			r.memSeen++
			if mv.by != s {
				s.addValue(mv.v, mv.kind, s.rel)
			}
		}
	}
	if len(r.vals) == 0 {
		r.scan = s.pos
		return s.pos
	}
	s.scanRepeats()
	return r.scan
}

func cmp64(a, b int64) int {
	if a < b {
		return -1
	}
	return 1
}

// addValue makes v active from stream offset from and looks for it in the
// bytes already checked for the others. It reports whether v was new.
func (s *stream) addValue(v []byte, kind int32, from int64) bool {
	r := &s.rep
	if len(r.vals) >= MemoryValues || r.size+len(v) > MemoryBytes {
		return false
	}
	for _, o := range r.vals {
		if bytes.Equal(o.v, v) {
			return false
		}
	}
	r.size += len(v)
	if r.byHead == nil {
		r.byHead = map[uint64][]int32{}
		r.pair = new([1024]uint64)
		r.scan = max(r.scan, from)
	}
	idx := int32(len(r.vals))
	r.vals = append(r.vals, repValue{v: v, kind: kind, from: from})
	h := binary.LittleEndian.Uint64(v)
	if _, ok := r.byHead[h]; !ok {
		r.heads = append(r.heads, newHead(v))
	}
	r.byHead[h] = append(r.byHead[h], idx)
	x := uint32(v[0]) | uint32(v[1])<<8
	r.pair[x>>6] |= 1 << (x & 63)
	r.maxLen = max(r.maxLen, len(v))
	r.dirty = true
	// The bytes from from to scan were checked without v.
	end := r.scan
	for p := max(from, s.base); p < end; {
		k := bytes.Index(s.buf[p-s.base:s.pos-s.base], v)
		if k < 0 || p+int64(k) >= end {
			break
		}
		at := p + int64(k)
		s.addRepeat(at, at+int64(len(v)), kind)
		p = at + 1
	}
	// An occurrence that the end of the buffer cuts is undecided: the main
	// scan takes it up again.
	if !s.eof {
		for q := max(from, s.base, s.pos-int64(len(v))+1); q < end; q++ {
			if string(s.buf[q-s.base:s.pos-s.base]) == string(v[:s.pos-q]) {
				r.scan = q
				break
			}
		}
	}
	return true
}

// addRepeat adds the span of an occurrence of a remembered value.
func (s *stream) addRepeat(a, b int64, kind int32) {
	if b <= s.rel && !s.inRun {
		return // released already (cannot happen: see repeatsSettle)
	}
	a = max(a, min(s.rel, b-1))
	for i := len(s.spans) - 1; i >= 0; i-- {
		o := &s.spans[i]
		if o.s == a && o.e == b && o.kind == kind {
			return
		}
		if o.s < a {
			break
		}
	}
	s.addSpan(span{s: a, e: b, kind: kind})
}

// scanRepeats checks the positions from rep.scan on against every active
// value, up to the first that cannot be decided yet.
func (s *stream) scanRepeats() {
	r := &s.rep
	b := s.buf[:s.pos-s.base]
	p := int(r.scan - s.base)
	if headScan && len(r.heads) <= fewHeads {
		q, ok := s.scanHeads(b, p)
		if !ok {
			r.scan = s.base + int64(q)
			return
		}
		p = q
	} else if s.m.vector {
		if r.dirty || r.ted == nil {
			kws := make([][]byte, len(r.vals))
			exact := make([]bool, len(r.vals))
			for i, v := range r.vals {
				kws[i], exact[i] = v.v, true
			}
			r.ted = newTeddy(kws, exact)
			r.dirty = false
		}
		if need := (len(b)-p)/32 + 1; cap(r.masks) < need {
			r.masks = make([]uint32, need)
		}
		n := 0
		if p < len(b) {
			n = teddyMasks(r.ted, b[p:], r.masks[:cap(r.masks)])
		}
		for blk := 0; blk < n; blk++ {
			for m := r.masks[blk]; m != 0; m &= m - 1 {
				q := p + 32*blk + bits.TrailingZeros32(m)
				if !s.repeatAt(b, q) {
					r.scan = s.base + int64(q)
					return
				}
			}
		}
		p += 32 * n
	}
	for ; p < len(b); p++ {
		if p+1 < len(b) {
			x := uint32(b[p]) | uint32(b[p+1])<<8
			if r.pair[x>>6]&(1<<(x&63)) == 0 {
				continue
			}
		}
		if !s.repeatAt(b, p) {
			r.scan = s.base + int64(p)
			return
		}
	}
	r.scan = s.pos
}

// fewHeads is the most distinct value heads that scanHeads looks for one by
// one; with more, the vector prefilter judges all at once.
const fewHeads = 4

// headScan turns scanHeads on; the tests turn it off to hold it to the
// other paths.
var headScan = true

// head is the first 8 bytes of remembered values (every value has at least
// MinValue of them), with the one of them that ordinary text holds least
// often (by textFreq) and its offset, which scanHeads looks for.
type head struct {
	h    uint64
	rare byte
	off  int
}

func newHead(v []byte) head {
	hd := head{h: binary.LittleEndian.Uint64(v)}
	best := 2.0
	for i, c := range v[:8] {
		if f := textFreq[c>>4][c&15]; f < best {
			best, hd.rare, hd.off = f, c, i
		}
	}
	return hd
}

// next is the first position q from p on, with q+8 <= len(b), where b holds
// the head, or -1.
func (hd *head) next(b []byte, p int) int {
	for i := p + hd.off; i < len(b)-7+hd.off; {
		k := bytes.IndexByte(b[i:len(b)-7+hd.off], hd.rare)
		if k < 0 {
			return -1
		}
		q := i + k - hd.off
		if binary.LittleEndian.Uint64(b[q:]) == hd.h {
			return q
		}
		i += k + 1
	}
	return -1
}

// scanHeads checks b[p:] against the active values at every position where
// a whole head fits: a value can start only where its head is, and each
// head's next occurrence is found by its rarest byte (bytes.IndexByte). It
// returns the first position it left unchecked (from there on no head
// fits) and true, or the position of an occurrence that cannot be decided
// yet and false.
func (s *stream) scanHeads(b []byte, p int) (int, bool) {
	r := &s.rep
	end := max(p, len(b)-7)
	var next [fewHeads]int // the next occurrence of each head at p or later; -1: none
	for i := range r.heads {
		next[i] = r.heads[i].next(b, p)
	}
	for {
		q := -1
		for i := range r.heads {
			if next[i] >= 0 && (q < 0 || next[i] < q) {
				q = next[i]
			}
		}
		if q < 0 {
			return end, true
		}
		if !s.repeatAt(b, q) {
			return q, false
		}
		for i := range r.heads {
			if next[i] == q {
				next[i] = r.heads[i].next(b, q+1)
			}
		}
	}
}

// repeatAt checks for active values at b[p:] (b ends at the stream's pos),
// adding a span for each one found. It returns false when an occurrence may
// start at p but b ends before it could be decided.
func (s *stream) repeatAt(b []byte, p int) bool {
	r := &s.rep
	at := s.base + int64(p)
	if p+8 <= len(b) {
		for _, i := range r.byHead[binary.LittleEndian.Uint64(b[p:])] {
			v := &r.vals[i]
			if p+len(v.v) > len(b) {
				if string(b[p:]) == string(v.v[:len(b)-p]) && !s.eof {
					return false
				}
				continue
			}
			if at >= v.from && string(b[p:p+len(v.v)]) == string(v.v) {
				s.addRepeat(at, at+int64(len(v.v)), v.kind)
			}
		}
		return true
	}
	if s.eof {
		return true
	}
	for i := range r.vals {
		if v := r.vals[i].v; string(b[p:]) == string(v[:len(b)-p]) {
			return false
		}
	}
	return true
}
