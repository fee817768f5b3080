package match

import (
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

// The vector prefilter. Before the scalar checks look at a position, a
// vector pass (where the CPU has one, see teddy_amd64.s) judges 32 or 64
// positions at a time and discards those where no keyword can start. It is
// the "Teddy" technique of Hyperscan (Intel) and of Rust's aho-corasick
// crate: keywords are reduced to fingerprints of their first four bytes,
// the fingerprints are spread over eight buckets (or up to 32, in sets of
// eight, one vector pass each, when there are many: see teddyPerTable), and for
// each fingerprint byte two 16-entry tables give, for the byte's low and for
// its high nibble, the buckets that accept it; one byte shuffle looks up 32
// (AVX2) or 64 (AVX-512) positions at once. A position survives if some
// bucket accepts each of its four bytes. That is a superset of the positions
// where a keyword starts (a bucket accepts any mix of its fingerprints'
// nibbles), so survivors still go through the check of direct.keep (see
// prefilter.refine) and then the direct comparison with their keywords,
// and a discarded position never starts a keyword.
//
// Exact and case-insensitive keywords have sets of tables of their own. A
// case-insensitive keyword is one fingerprint, its bytes ORed with 0x20,
// and its sets look the input up folded the same way (the high nibble ORed
// with 2: a letter's lower case, and a few other bytes folded together,
// which only lets more through). Each ASCII case variant its own
// fingerprint, as before, made the catalogue's 81 case-insensitive
// keywords 513 of 848 fingerprints, and a bucket holding "encr" and "ENCR"
// accepts both halves of the alphabet at every byte: with folded sets (42
// fingerprints, one set; 335 exact ones in three) 2.5% of the positions of
// BenchmarkWriterPlainLog's log survive instead of 3.9%, 5.6% of
// BenchmarkWriterNoSecrets's (keyword-dense) instead of 5.4%.

// teddyLen is the number of leading keyword bytes in a fingerprint.
const teddyLen = 4

// teddyTables is the layout teddy_amd64.s reads: for fingerprint byte j,
// lo[j] and hi[j] map a nibble to the set of buckets (one bit each) that
// accept it, each 16-byte table written twice for the two 128-bit lanes of a
// 256-bit shuffle (the 512-bit kernel broadcasts the first 16 bytes to its
// four lanes); then the nibble mask 0x0f, 32 times; then fold, which
// tells a set of case-folded fingerprints (those come after all exact
// ones: the vector code folds the input in place). One set of tables
// holds eight buckets; more fingerprints than eight buckets can keep apart
// get further sets in next, and a position survives if some set lets it
// through (the union of their buckets).
type teddyTables struct {
	lo, hi [teddyLen][32]byte
	nibble [32]byte
	fold   [32]byte // 0x02 (32 times) in a set of case-folded fingerprints, else 0
	next   *teddyTables
}

// teddyPerTable is about how many fingerprints one set of eight buckets
// holds before merging unlike ones lets most of a log's positions through:
// every further teddyPerTable fingerprints get one more set of tables (one
// more vector pass, eight byte shuffles per step), at most teddyMaxTables.
// Measured with the catalogue's 359 keywords (695 four-byte fingerprints,
// case variants included, before the case-folded sets)
// on BenchmarkWriterPlainLog's log and on benchLog: four sets let 1.4% and
// 3.2% of the positions through, three sets 5.6% and 7.1%, two 9.7% and
// 11.5%; PlainLog ran at about 1.7 GB/s with three sets, 2.2 with four and
// 2.2 with five (AVX-512). Three-byte fingerprints in four sets let 2.4%
// and 4.3% through: the fourth byte tells apart most of what the buckets
// merge.
const (
	teddyPerTable  = 100
	teddyMaxTables = 4
)

// newTeddy returns the tables for kws (exact[i]: kws[i] is case-sensitive;
// keywords must not be empty). For a keyword shorter than teddyLen the
// fingerprint bytes past its end accept anything: a one-byte keyword (the
// line start of a --redact-pattern) lets through every position holding it.
func newTeddy(kws [][]byte, exact []bool) *teddyTables {
	// A fingerprint is packed little-endian in a uint64, its length in
	// bits 32 and up.
	var exactFps, foldFps []uint64
	for ki, k := range kws {
		n := min(len(k), teddyLen)
		fp := uint64(n) << 32
		for j := 0; j < n; j++ {
			c := k[j]
			if !exact[ki] {
				c |= 0x20
			}
			fp |= uint64(c) << (8 * j)
		}
		if exact[ki] {
			exactFps = append(exactFps, fp)
		} else {
			foldFps = append(foldFps, fp)
		}
	}
	slices.Sort(exactFps)
	exactFps = slices.Compact(exactFps)
	slices.Sort(foldFps)
	foldFps = slices.Compact(foldFps)

	// The sets are shared between the two kinds of fingerprints as the
	// cost model prefers (the catalogue's: three sets of exact ones, one of
	// folded ones). Fewer buckets of a kind are the greedy merge of more
	// continued, so each kind is merged once, from the most buckets down.
	sets := min(teddyMaxTables, max(1, (len(exactFps)+len(foldFps)+teddyPerTable-1)/teddyPerTable))
	if len(exactFps) > 0 && len(foldFps) > 0 {
		sets = max(sets, 2)
	}
	byKind := func(fps []uint64, fold bool) [][]teddyBucket {
		out := make([][]teddyBucket, sets+1) // by number of sets
		if len(fps) == 0 {
			return out
		}
		bs := teddyGroups(fps)
		for n := sets; n >= 1; n-- {
			if len(bs) > 8*n {
				bs = mergeBuckets(bs, 8*n, fold)
			}
			out[n] = slices.Clone(bs)
		}
		return out
	}
	exactBs, foldBs := byKind(exactFps, false), byKind(foldFps, true)
	var bestE, bestF []teddyBucket
	best := -1.0
	for fs := 0; fs <= sets; fs++ {
		es := sets - fs
		if (fs == 0) != (len(foldFps) == 0) || (es == 0) != (len(exactFps) == 0) {
			continue
		}
		c := 0.0
		for _, b := range exactBs[es] {
			c += b.cost(false)
		}
		for _, b := range foldBs[fs] {
			c += b.cost(true)
		}
		if best < 0 || c < best {
			best, bestE, bestF = c, exactBs[es], foldBs[fs]
		}
	}
	var head *teddyTables
	add := func(buckets []teddyBucket, fold bool) {
		for i := (len(buckets) - 1) / 8 * 8; i >= 0; i -= 8 {
			t := teddySet(buckets[i:min(i+8, len(buckets))])
			if fold {
				for k := range t.fold {
					t.fold[k] = 0x02
				}
			}
			t.next = head
			head = t
		}
	}
	// The folded sets last: the vector code folds the high nibbles in
	// place for them (teddy_amd64.s).
	add(bestF, true)
	add(bestE, false)
	if head == nil {
		head = teddySet(nil) // no keywords: a set that accepts nothing
	}
	return head
}

// teddySet lays out up to eight buckets as one set of tables.
func teddySet(buckets []teddyBucket) *teddyTables {
	t := &teddyTables{}
	for i := range t.nibble {
		t.nibble[i] = 0x0f
	}
	for b, bucket := range buckets {
		bit := byte(1) << b
		for j := 0; j < teddyLen; j++ {
			for n := 0; n < 16; n++ {
				if bucket.lo[j]&(1<<n) != 0 {
					t.lo[j][n] |= bit
				}
				if bucket.hi[j]&(1<<n) != 0 {
					t.hi[j][n] |= bit
				}
			}
		}
	}
	for j := 0; j < teddyLen; j++ {
		copy(t.lo[j][16:], t.lo[j][:16])
		copy(t.hi[j][16:], t.hi[j][:16])
	}
	return t
}

// teddyLater holds tables that are built on another goroutine, and only
// once the automaton has been given teddyStartAfter bytes to scan: choosing
// the buckets for the catalogue's several hundred fingerprints takes about 3
// ms of CPU, which a short command (capwrap -- true) or one that prints a
// few lines would otherwise pay at start-up, on a machine whose other core
// is starting the command. Until they are ready the scalar filter alone
// runs; the output is the same either way (FuzzTeddy and
// TestTeddyBuiltInBackground hold the two paths to the same output), only
// slower for those first bytes.
type teddyLater struct {
	kws     [][]byte
	exact   []bool
	fed     atomic.Int64 // bytes offered to get so far
	started atomic.Bool
	tables  atomic.Pointer[teddyTables]
	done    chan struct{}
}

// teddyStartAfter is how many bytes of input (over all the streams that
// share an automaton) the scalar filter handles before the vector tables
// are built: at a few hundred MB/s, about a millisecond of scanning.
const teddyStartAfter = 256 << 10

// buildTeddy returns a teddyLater for kws (see newTeddy); nothing is built
// yet.
func buildTeddy(kws [][]byte, exact []bool) *teddyLater {
	return &teddyLater{kws: kws, exact: exact, done: make(chan struct{})}
}

// start begins building the tables, once.
func (l *teddyLater) start() {
	if l.started.CompareAndSwap(false, true) {
		go func() {
			l.tables.Store(newTeddy(l.kws, l.exact))
			close(l.done)
		}()
	}
}

// get returns the tables for a scan of n bytes, or nil while they are not
// built (or when l is nil: no vector prefilter); the n bytes count towards
// teddyStartAfter.
func (l *teddyLater) get(n int) *teddyTables {
	if l == nil {
		return nil
	}
	if t := l.tables.Load(); t != nil {
		return t
	}
	if l.fed.Add(int64(n)) >= teddyStartAfter {
		l.start()
	}
	return nil
}

// wait starts building the tables and returns them once they are built
// (nil when l is nil).
func (l *teddyLater) wait() *teddyTables {
	if l == nil {
		return nil
	}
	l.start()
	<-l.done
	return l.tables.Load()
}

// teddyBlock is the portable statement of what teddyMasks computes for the
// block of 32 positions at b[off:]: bit i is set when position off+i
// survives the filter. It needs off+32+teddyLen-1 <= len(b). The tests hold
// the vector code to it.
func teddyBlock(t *teddyTables, b []byte, off int) uint32 {
	var m uint32
	for ; t != nil; t = t.next {
		for i := 0; i < 32; i++ {
			acc := byte(0xff)
			for j := 0; j < teddyLen; j++ {
				c := b[off+i+j]
				acc &= t.lo[j][c&15] & t.hi[j][c>>4|t.fold[0]]
			}
			if acc != 0 {
				m |= 1 << i
			}
		}
	}
	return m
}

// teddyBucket is a set of fingerprints sharing one bucket: at each
// fingerprint byte, the low and high nibbles it accepts (bit n: nibble n).
type teddyBucket struct {
	lo, hi [teddyLen]uint16
}

// add puts the packed fingerprint fp in the bucket (see newTeddy).
func (b *teddyBucket) add(fp uint64) {
	n := int(fp >> 32)
	for j := 0; j < teddyLen; j++ {
		if j >= n {
			b.lo[j], b.hi[j] = 0xffff, 0xffff
			continue
		}
		c := byte(fp >> (8 * j))
		b.lo[j] |= 1 << (c & 15)
		b.hi[j] |= 1 << (c >> 4)
	}
}

func (b teddyBucket) union(o teddyBucket) teddyBucket {
	for j := 0; j < teddyLen; j++ {
		b.lo[j] |= o.lo[j]
		b.hi[j] |= o.hi[j]
	}
	return b
}

// cost estimates how often a position of ordinary text passes the bucket:
// at each byte it accepts every byte whose two nibbles it accepts there, so
// it admits more than its fingerprints.
func (b teddyBucket) cost(fold bool) float64 {
	c := 1.0
	sum := textLoSum()
	for j := 0; j < teddyLen; j++ {
		p := 0.0
		lo := b.lo[j]
		hs := b.hi[j]
		if fold {
			// The input's high nibble h is looked up as h|2.
			hs |= hs & 0xcccc >> 2
		}
		for hs &= textHi; hs != 0; hs &= hs - 1 {
			h := bits.TrailingZeros16(hs)
			p += sum[h][0][byte(lo)] + sum[h][1][lo>>8]
		}
		c *= p
	}
	return c
}

// teddyGroups puts the fingerprints fps (packed, distinct) with the same
// first two bytes in one bucket each; a one-byte fingerprint is a bucket of
// its own. mergeBuckets then merges the two groups whose union costs least
// over their separate costs until as many are left as the tables hold
// (agglomerative clustering under the cost model of textFreq). Two bytes
// rather than one: a first byte that starts many keywords (s: sk_, sdk-,
// secret, shpat_ ...) would put them all in one bucket that accepts nearly
// every second and third byte.
func teddyGroups(fps []uint64) []teddyBucket {
	var bs []teddyBucket
	group := map[uint64]int{} // first two bytes → index in bs
	for _, fp := range fps {
		key := fp & 0xffff
		if fp>>32 < 2 {
			key = fp
		}
		g, ok := group[key]
		if !ok {
			g = len(bs)
			group[key] = g
			bs = append(bs, teddyBucket{})
		}
		bs[g].add(fp)
	}
	return bs
}

// mergeBuckets merges the two buckets of bs whose union costs least over
// their separate costs until n are left, and returns those (bs is
// overwritten).
func mergeBuckets(bs []teddyBucket, n int, fold bool) []teddyBucket {
	cost := make([]float64, len(bs))
	for i := range bs {
		cost[i] = bs[i].cost(fold)
	}
	// extra[i][j]: what merging i and j adds to the total cost; best[i]: the
	// j that minimises it (-1: none left).
	extra := make([][]float64, len(bs))
	for i := range bs {
		extra[i] = make([]float64, len(bs))
	}
	for i := range bs {
		for j := i + 1; j < len(bs); j++ {
			e := bs[i].union(bs[j]).cost(fold) - cost[i] - cost[j]
			extra[i][j], extra[j][i] = e, e
		}
	}
	alive := make([]bool, len(bs))
	for i := range alive {
		alive[i] = true
	}
	best := make([]int, len(bs))
	rowBest := func(i int) {
		best[i] = -1
		for j := range bs {
			if j != i && alive[j] && (best[i] < 0 || extra[i][j] < extra[i][best[i]]) {
				best[i] = j
			}
		}
	}
	for i := range bs {
		rowBest(i)
	}
	for left := len(bs); left > n; left-- {
		bi := -1
		for i := range bs {
			if alive[i] && (bi < 0 || extra[i][best[i]] < extra[bi][best[bi]]) {
				bi = i
			}
		}
		bj := best[bi]
		bs[bi] = bs[bi].union(bs[bj])
		cost[bi] = bs[bi].cost(fold)
		alive[bj] = false
		for k := range bs {
			if alive[k] && k != bi {
				e := bs[bi].union(bs[k]).cost(fold) - cost[bi] - cost[k]
				extra[bi][k], extra[k][bi] = e, e
			}
		}
		rowBest(bi)
		for k := range bs {
			if !alive[k] || k == bi {
				continue
			}
			if best[k] == bi || best[k] == bj {
				rowBest(k)
			} else if extra[k][bi] < extra[k][best[k]] {
				best[k] = bi
			}
		}
	}
	var out []teddyBucket
	for i, b := range bs {
		if alive[i] {
			out = append(out, b)
		}
	}
	return out
}

// textFreq is a rough distribution of bytes in build and test logs, by high
// and low nibble: English letters by their usual frequency (upper case a
// quarter as often: PASSED, ERROR, GET), digits, spaces and common
// punctuation. It only steers the choice of buckets; the filter is exact
// whatever it says. textHi has bit h set when some byte with high nibble h
// has a frequency.
var textFreq, textHi = func() (q [16][16]float64, hi uint16) {
	var w [256]float64
	w[' '] = 15
	for _, c := range "\n./_-:" {
		w[c] = 1.5
	}
	for _, c := range "=,()[]\"'" {
		w[c] = 0.5
	}
	const letters = "etaoinshrdlcumwfgypbvkjxqz"
	for i := 0; i < len(letters); i++ {
		f := 8 * float64(len(letters)-i) / float64(len(letters))
		w[letters[i]] += f
		w[letters[i]-'a'+'A'] += f / 4
	}
	for c := '0'; c <= '9'; c++ {
		w[c] = 0.8
	}
	total := 0.0
	for _, p := range w {
		total += p
	}
	for c, p := range w {
		if p > 0 {
			q[c>>4][c&15] = p / total
			hi |= 1 << (c >> 4)
		}
	}
	return q, hi
}()

// textLoSum()[h][k][m] is the sum of textFreq[h][l] over the low nibbles l
// of the byte m of a 16-bit nibble set (k: its low or its high byte), so
// that cost adds a whole set in two lookups. Built at first use, not in the
// package's init (64 KiB, issue 28: a run that compiles no policy skips it).
var textLoSum = sync.OnceValue(func() *[16][2][256]float64 {
	t := new([16][2][256]float64)
	for h := range t {
		for k := range t[h] {
			for m := range t[h][k] {
				for l := 0; l < 8; l++ {
					if m&(1<<l) != 0 {
						t[h][k][m] += textFreq[h][8*k+l]
					}
				}
			}
		}
	}
	return t
})
