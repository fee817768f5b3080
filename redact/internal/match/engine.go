// Package match is a streaming multi-keyword matcher: it finds every
// occurrence of a set of keywords in a byte stream, asks a Detector at each
// one which bytes around it make up spans to drop, and writes the stream on
// with every merged run of spans replaced by a marker, holding back only
// what may still turn out to be part of a span. Package redact is its one
// user; this package knows nothing of secrets: the keywords, the detectors,
// the marker bytes and which values to remember are what its caller hands
// it (redact's policy).
//
// Semantics (the same as the whole-buffer reference in redact's tests):
// every keyword occurrence anywhere in the stream is found; each yields
// spans (a literal keyword is its own span, a Detector decides from the
// window that starts at the keyword); all spans are united, overlapping and
// adjacent ones merged, and each merged run is written as the marker of its
// first span (smallest start, then smallest kind). Nothing else changes. A
// span may be open-ended: it then grows over the following bytes as long as
// its Extender accepts them, so a long span is dropped as it arrives instead
// of being held. The value of a decided span may be remembered (the caller
// says which): its later occurrences are spans too (repeat.go). Because every
// decision is a function of stream bytes only (never of how they were split
// into writes), the output does not depend on chunking.
//
// The pieces: the keyword automaton (automaton.go) with its vector
// prefilter (teddy.go, teddy_amd64.s), the stream of candidates, spans and
// the release frontier (this file, writer.go) and the scanner for
// remembered values (repeat.go). A detector reads its window with the
// primitives of package scan.
package match

import (
	"bytes"
	"io"
	"math"

	"github.com/capwrap/capwrap/redact/internal/scan"
)

// chunkSize bounds how many input bytes one pass of the matcher handles, so
// the working buffer stays near chunkSize+holdback bytes whatever the size of
// a Write.
const chunkSize = 64 << 10

// Keyword is one string the automaton looks for.
type Keyword struct {
	Text  []byte   // not empty; only read (redact hands in the bytes of strings)
	Exact bool     // verified byte for byte against the input (else ASCII case-insensitive)
	Det   Detector // nil: the keyword itself is the span
	Kind  int32    // Det nil: the span's kind, an index in the markers
}

// Detector decides whether a keyword occurrence starts or precedes spans,
// and which. The same Detector may serve several keywords.
type Detector interface {
	// Window is the number of bytes, counted from the keyword's start,
	// that Eval may look at for a keyword of length kw.
	Window(kw int) int
	// Eval decides from w, the stream bytes from the keyword's start (at
	// most Window(kw) of them), pre, up to two bytes just before the
	// keyword (see Backer), and final, which is true when w will not grow
	// (window full or end of stream). When w is not yet conclusive it
	// returns pending and from, the smallest offset in w where a span may
	// still start (see scan.Wait). Otherwise it reports every span to sink
	// (offsets relative to w) and returns pending false. The result for a
	// given w must not depend on how often Eval was called before: Eval
	// may only decide early when more bytes cannot change the answer.
	Eval(w, pre []byte, kw int, final bool, sink SpanSink) (pending bool, from int)
}

// Backer is a Detector that looks further back than two bytes: Eval's pre
// then holds up to Back() bytes before the keyword (fewer at the stream's
// start).
type Backer interface {
	Back() int
}

// AfterKeyword is a Detector whose spans never start before its keyword's
// end when AfterKeyword returns true (a key's value, a command's option):
// the bytes of a keyword not yet complete at the end of the input need not
// be held back for it.
type AfterKeyword interface {
	AfterKeyword() bool
}

// lookBack returns how many bytes before its keyword d's pre holds.
func lookBack(d Detector) int {
	if b, ok := d.(Backer); ok {
		return max(b.Back(), 2)
	}
	return 2
}

// SpanSink receives the spans a Detector decides on: the bytes [s, e) of
// its window (e > s), the kind of marker that replaces them, and how the
// span grows past e (the zero Extender: it does not).
type SpanSink interface {
	Add(s, e int, kind int32, ext Extender)
}

// Extender lets a decided span grow over the bytes that follow it, so that
// a span too long for any window is dropped as it arrives, never held.
type Extender struct {
	Mode  uint8         // ExtNone, ExtSet or ExtPEM
	Set   *scan.ByteSet // ExtSet: bytes that continue the span
	Max   int           // the span grows at most this many bytes past its decided end
	limit int64         // absolute stream offset the span never grows past; set by the matcher from Max
	m     int           // ExtPEM: progress through the end marker; extLit: bytes of lit matched
	lit   []byte        // extLit: the rest of a long literal (see literal.go)
}

const (
	ExtNone = iota // the span does not grow
	ExtSet         // grow while bytes are in Set
	ExtPEM         // grow through the next "-----END" and the "-----" after it (a PEM block's last line)
	extLit         // grow while the bytes continue lit (the matcher's own, for long literals)
)

// feed consumes b, the bytes right after the span's current end, and returns
// how many of them belong to the span and whether the span is now closed.
func (x *Extender) feed(b []byte, at int64) (int, bool) {
	room := x.limit - at
	if room <= 0 {
		return 0, true
	}
	if int64(len(b)) > room {
		b = b[:room]
	}
	switch x.Mode {
	case ExtSet:
		for i, c := range b {
			if !x.Set[c] {
				return i, true
			}
		}
	case ExtPEM:
		const end = "-----END"
		for i, c := range b {
			if x.m < len(end) {
				switch {
				case c == end[x.m]:
					x.m++
				case c == '-' && x.m > 5:
					x.m = 1
				case c == '-':
					// still a run of dashes
				default:
					x.m = 0
				}
				continue
			}
			// After "-----END": the span closes after the next "-----".
			if c == '-' {
				x.m++
				if x.m == len(end)+5 {
					return i + 1, true
				}
			} else {
				x.m = len(end)
			}
		}
	case extLit:
		for i, c := range b {
			if c != x.lit[x.m] {
				return i, true
			}
			x.m++
		}
	default:
		return 0, true
	}
	if int64(len(b)) == room {
		return len(b), true
	}
	return len(b), false
}

// Matcher is the immutable, shareable part of a matcher: keywords,
// automaton, markers. It is safe for concurrent use; each stream gets its
// own Writer (NewWriter).
type Matcher struct {
	ac      *automaton
	kws     []Keyword // the automaton's keywords: all but the literals
	lits    *litSet   // the literals (see literal.go); nil: none
	markers [][]byte  // by kind; a smaller kind wins a tie at the same start
	lineDet Detector  // if set, also opened at stream offset 0 with kw 0
	evals   []kwEval  // by index in kws: what evalCands needs of a keyword with a Detector
	lineEv  kwEval    // the same for lineDet
	hold    int       // most bytes ever held back, see Holdback
	hist    int       // bytes kept before the scan position for verification and look-back
	back    int       // the longest look-back of a Detector (see Backer)
	vector  bool      // the scanner of remembered values may use the vector prefilter
}

// New builds the matcher for kws. markers[k] is written for a run whose
// first span has kind k; a smaller kind wins a tie at the same start.
// lineDet, if not nil, is also opened at stream offset 0 with an empty
// keyword (a detector of lines, whose keyword "\n" is among kws). The
// keywords' detectors are called from every Writer's goroutine: they must
// not keep state between calls.
func New(kws []Keyword, markers [][]byte, lineDet Detector) *Matcher {
	m := &Matcher{markers: markers, lineDet: lineDet, back: 2, vector: haveTeddy()}
	nlit := 0
	for _, k := range kws {
		if k.Exact && k.Det == nil && len(k.Text) >= MinLiteral {
			nlit++
		}
	}
	lits := make([]litKw, 0, nlit)
	m.kws = make([]Keyword, 0, len(kws)-nlit)
	for _, k := range kws {
		if k.Exact && k.Det == nil && len(k.Text) >= MinLiteral {
			n := min(len(k.Text), MaxLiteral)
			lits = append(lits, litKw{text: k.Text[:n:n], rest: k.Text[n:], kind: k.Kind})
			m.hold = max(m.hold, n)
			continue
		}
		m.kws = append(m.kws, k)
	}
	m.lits = newLitSet(lits)
	kws = m.kws
	texts := make([][]byte, len(kws))
	exact := make([]bool, len(kws))
	after := make([]bool, len(kws))
	for i, k := range kws {
		texts[i] = k.Text
		exact[i] = k.Exact
		if a, ok := k.Det.(AfterKeyword); ok {
			after[i] = a.AfterKeyword()
		}
		if len(k.Text) > m.hold {
			m.hold = len(k.Text)
		}
		if k.Det != nil {
			if w := RawWindow(k.Det.Window(len(k.Text))); w > m.hold {
				m.hold = w
			}
			m.back = max(m.back, lookBack(k.Det))
		}
	}
	m.evals = make([]kwEval, len(kws))
	for i, k := range kws {
		if k.Det != nil {
			m.evals[i] = newKwEval(k.Det, len(k.Text))
		}
	}
	if lineDet != nil {
		m.lineEv = newKwEval(lineDet, 0)
		if w := RawWindow(lineDet.Window(0)); w > m.hold {
			m.hold = w
		}
	}
	m.ac = newAutomaton(texts, exact, after)
	m.hist = m.ac.maxLen + m.back
	return m
}

// Holdback returns the most bytes a Writer of m ever holds back undecided,
// whatever the input and however it is split: the longest window of a
// detector or the longest keyword, whichever is longer, a literal counting
// at most its first MaxLiteral bytes (see literal.go). Open-ended spans
// are dropped as they arrive, which holds nothing.
func (m *Matcher) Holdback() int { return m.hold }

// WithoutVector returns a copy of m whose Writers never use the vector
// prefilter, for keywords or for remembered values: what a CPU without
// AVX2 (or a purego build) runs. The output is the same; it is for the
// tests and benchmarks that compare the two paths.
func (m *Matcher) WithoutVector() *Matcher {
	c := *m
	ac := *m.ac
	ac.ted = nil
	c.ac = &ac
	c.vector = false
	return &c
}

// BuildVector builds m's vector prefilter tables now and returns once they
// are built (at once where there is no vector prefilter). Otherwise they
// are built on another goroutine once the Writers of m have scanned 256
// KiB, and the scalar filter runs until then, with the same output; it is
// for the tests and benchmarks that measure the vector path from the first
// byte.
func (m *Matcher) BuildVector() {
	m.ac.ted.wait()
	if m.lits != nil {
		m.lits.ted.wait()
	}
}

// kwEval is what evaluating a candidate needs of its keyword and Detector,
// looked up once in New (the Detector's Window and Back are constants, as
// the holdback they make is).
type kwEval struct {
	det   Detector
	kwLen int
	win   int   // det.Window(kwLen)
	raw   int64 // RawWindow(win): the stream bytes its window spans
	back  int   // lookBack(det)
}

func newKwEval(det Detector, kwLen int) kwEval {
	win := det.Window(kwLen)
	return kwEval{det: det, kwLen: kwLen, win: win, raw: int64(RawWindow(win)), back: lookBack(det)}
}

type cand struct {
	start int64 // stream offset of the keyword
	kw    int32 // index in Matcher.kws, or -1 for the line Detector at offset 0
	from  int64 // earliest stream offset a span from it may start
	seen  int64 // stream end at its last evaluation (0: never evaluated)
}

type span struct {
	s, e int64
	kind int32
	ext  Extender // ext.mode != ExtNone: still growing
}

// stream is one matcher run over one byte stream.
type stream struct {
	m    *Matcher
	dst  io.Writer
	buf  []byte // stream bytes [base, pos)
	base int64
	pos  int64
	rel  int64 // bytes before rel are written out or dropped: final
	st   int32 // automaton state after byte pos-1
	pf   prefilter
	hits []hit // room for the keyword occurrences one feed finds

	cands []cand
	spans []span // decided, sorted by (s, kind), none ending before rel unless in the run

	inRun  bool  // a marker was written and bytes up to runEnd are being dropped
	runEnd int64 // end of the current merged run

	curStart int64 // start of the candidate under evaluation, for add
	replaced int64
	rep      repeats               // remembered values and their later occurrences (repeat.go)
	lscan    int64                 // every position before lscan was checked against the literals (literal.go)
	litMasks []uint32              // room for the vector prefilter's verdicts on literals
	remember func(v []byte) []byte // the part of a decided span's value to remember (nil: none); nil: none at all
	obs      Observer              // told of each run written as a marker; nil: none
	lastEsc  int64                 // stream offset of the last display escape byte (scan.Esc) fed; -1: none
	pend     []byte                // release's output while it is one piece (of buf or a marker)
	joined   []byte                // release's output once it is more than one piece
	eof      bool
	err      error
}

// Observer is told of each run of input bytes that a stream replaces by a
// marker, in stream order: Start when the marker is written, Dropped with
// the run's bytes as they are dropped (b is valid only during the call),
// End when the run is complete. A run still open when the destination
// fails gets no End.
type Observer interface {
	Start(at int64, kind int32) // a marker of kind for a run that starts at stream offset at
	Dropped(b []byte)           // the next bytes of the current run
	End(at int64)               // the current run ends at stream offset at
}

// init readies s to write what m decides to dst. remember chooses the
// values of decided spans that mask their later occurrences, mem shares
// them with other streams, obs is told of every run; each may be nil.
func (s *stream) init(m *Matcher, dst io.Writer, remember func(v []byte) []byte, mem *Memory, obs Observer) {
	s.m = m
	s.dst = dst
	s.remember = remember
	s.rep.mem = mem
	s.obs = obs
	s.buf = make([]byte, 0, chunkSize+2*m.hold+2*m.hist)
	s.lastEsc = -1
	if m.lineDet != nil {
		s.cands = append(s.cands, cand{start: 0, kw: -1, from: 0})
	}
}

// write runs p through the matcher and writes out whatever became final.
func (s *stream) write(p []byte) (int, error) {
	done := 0
	for len(p) > 0 && s.err == nil {
		n := min(len(p), chunkSize)
		s.feed(p[:n])
		s.settle()
		p = p[n:]
		done += n
	}
	return done, s.err
}

// close ends the stream: everything held is decided and written.
func (s *stream) close() error {
	if s.eof {
		return s.err
	}
	s.eof = true
	s.settle()
	return s.err
}

// feed appends p to the buffer and records every keyword occurrence that
// ends in it.
func (s *stream) feed(p []byte) {
	old := len(s.buf)
	s.buf = append(s.buf, p...)
	s.pos = s.base + int64(len(s.buf))
	if bytes.IndexByte(p, scan.Esc) >= 0 {
		s.lastEsc = s.pos - int64(len(p)) + int64(bytes.LastIndexByte(p, scan.Esc))
	}
	ac := s.m.ac
	b := s.buf
	if len(p) < directMin+ac.maxLen {
		// A short write: the machine over its bytes.
		ac.ted.get(len(p)) // counted towards building the vector tables all the same
		st := s.st
		for i := old; i < len(b); i++ {
			st = ac.delta[int(st)*ac.nclass+int(ac.class[b[i]])]
			if ac.hasOut[st] {
				for _, k := range ac.outputs(st) {
					s.found(k, s.base+int64(i)+1)
				}
			}
		}
		s.st = st
		return
	}
	// The keywords that began before p: the machine from its state, as
	// long as the bytes that state stands for began before p.
	hits := s.hits[:0]
	st, i := s.st, old
	for i < len(b) && i-int(ac.depth[st]) < old {
		st = ac.delta[int(st)*ac.nclass+int(ac.class[b[i]])]
		i++
		if ac.hasOut[st] {
			for _, k := range ac.outputs(st) {
				if n := len(ac.kws[k]); i-n < old && s.exactAt(k, b[i-n:i]) {
					hits = append(hits, hit{int32(i - n), int32(i), k})
				}
			}
		}
	}
	// Those that begin in p: the direct check at every position where
	// one may begin.
	s.pf.fill(ac, b, old)
	for _, i := range s.pf.pos {
		hits = ac.dir.at(b, int(i), hits)
	}
	for i := s.pf.to; ; i++ {
		if i = ac.skip(b, i); i >= len(b) {
			break
		}
		hits = ac.dir.at(b, i, hits)
	}
	// The machine's state after p depends on its last maxLen bytes only
	// (the longest of their suffixes that begins a keyword).
	st = 0
	for _, c := range b[max(len(b)-ac.maxLen, 0):] {
		st = ac.delta[int(st)*ac.nclass+int(ac.class[c])]
	}
	s.st = st
	sortHits(hits)
	for _, h := range hits {
		s.occurs(h.kw, s.base+int64(h.start), s.base+int64(h.end))
	}
	s.hits = hits
}

// directMin is, over the longest keyword's length, the fewest bytes a
// feed runs the direct check for: it runs the machine over as many bytes
// after it (for its state), the cost of a short write's walk.
const directMin = 64

// found handles keyword k ending at stream offset end, as the automaton
// finds it (in any case: an exact keyword is checked here).
func (s *stream) found(k int32, end int64) {
	start := end - int64(len(s.m.kws[k].Text))
	if s.exactAt(k, s.buf[start-s.base:end-s.base]) {
		s.occurs(k, start, end)
	}
}

// exactAt reports whether b, where keyword k was found, is k's text if k
// is exact (true for a case-insensitive one).
func (s *stream) exactAt(k int32, b []byte) bool {
	kw := &s.m.kws[k]
	return !kw.Exact || string(b) == string(kw.Text)
}

// occurs handles keyword k at stream offsets [start, end), in the case it
// needs. A keyword with a Detector is a candidate; its window is
// evaluated at once when the buffer holds all of it and no other
// candidate is pending (on a keyword-dense log nearly every one, whose
// detector decides at once that no secret follows: test_token_refresh
// PASSED), which is what evalCands would do next with the same bytes, in
// the same order (see evalCand).
func (s *stream) occurs(k int32, start, end int64) {
	kw := &s.m.kws[k]
	if kw.Det == nil {
		s.addSpan(span{s: start, e: end, kind: kw.Kind})
		return
	}
	c := cand{start: start, kw: k, from: start}
	if len(s.cands) == 0 && start+s.m.evals[k].raw <= s.pos && !s.eof {
		if !s.evalCand(&c) {
			return
		}
	}
	s.cands = append(s.cands, c)
}

// Add implements SpanSink for the candidate being evaluated.
func (s *stream) Add(a, b int, kind int32, ext Extender) {
	sp := span{s: s.curStart + int64(a), e: s.curStart + int64(b), kind: kind, ext: ext}
	if sp.ext.Mode != ExtNone {
		sp.ext.limit = sp.e + int64(sp.ext.Max)
	} else {
		s.learn(sp)
	}
	s.addSpan(sp)
}

func (s *stream) addSpan(sp span) {
	if sp.e <= sp.s {
		return // detectors never report empty spans; be safe anyway
	}
	i := len(s.spans)
	s.spans = append(s.spans, sp)
	for i > 0 && (s.spans[i-1].s > sp.s || s.spans[i-1].s == sp.s && s.spans[i-1].kind > sp.kind) {
		s.spans[i] = s.spans[i-1]
		i--
	}
	s.spans[i] = sp
}

// settle evaluates candidates, grows open spans, writes out what is final
// and drops from the buffer what is no longer needed.
func (s *stream) settle() {
	s.evalCands()
	s.scanLits() // before growOpen: a long literal's span is open
	s.growOpen()
	s.release(s.frontier())
	s.compact()
}

// evalCands asks the detector of each candidate about its window, as far
// as the stream has it, and keeps the candidates still pending.
func (s *stream) evalCands() {
	kept := s.cands[:0]
	for _, c := range s.cands {
		if s.evalCand(&c) {
			kept = append(kept, c)
		}
	}
	s.cands = kept
}

// evalCand asks the detector of c about its window, as far as the stream
// has it, and reports whether c is still pending (c.from then tells where
// its spans may start).
func (s *stream) evalCand(c *cand) bool {
	ev := &s.m.lineEv
	if c.kw >= 0 {
		ev = &s.m.evals[c.kw]
	}
	win := ev.raw // room for display escapes (display.go)
	end := min(s.pos, c.start+win)
	final := s.eof || c.start+win <= s.pos
	if !final && c.seen > 0 && end-c.start < 2*(c.seen-c.start) &&
		bytes.IndexByte(s.buf[c.seen-s.base:end-s.base], '\n') < 0 {
		// Re-evaluated only when its window doubled, a line ended or it
		// is final, so one-byte writes cost O(window log window) per
		// candidate; the decision is the same, at most a little later.
		return true
	}
	c.seen = end
	lo := max(c.start-int64(ev.back), 0)
	s.curStart = c.start
	// No display escape fed since the look-back's start: the window
	// and the look-back are their own view (what EvalDisplay would
	// find with a search of both).
	pending, from := evalDisplay(ev.det, ev.win, s.buf[c.start-s.base:end-s.base], s.buf[lo-s.base:c.start-s.base], ev.kwLen, final, s, s.lastEsc < lo)
	if pending {
		c.from = c.start + int64(from)
	}
	return pending
}

// growOpen grows the open spans over the bytes that arrived.
func (s *stream) growOpen() {
	for i := range s.spans {
		sp := &s.spans[i]
		if sp.ext.Mode == ExtNone {
			continue
		}
		n, done := sp.ext.feed(s.buf[sp.e-s.base:], sp.e)
		sp.e += int64(n)
		if done || s.eof {
			if sp.ext.Mode == ExtSet && sp.e < sp.ext.limit {
				s.learn(span{s: sp.s, e: sp.e, kind: sp.kind}) // closed by its value's end, not cut at its bound
			}
			sp.ext.Mode = ExtNone
		}
	}
	// Every span still open now ends at pos; two with the same extender
	// state will grow alike, so the later one adds nothing to their union
	// but its limit: keep the earlier with the larger limit.
	kept := s.spans[:0]
	for _, sp := range s.spans {
		if sp.ext.Mode != ExtNone {
			if j := sameOpen(kept, &sp); j >= 0 {
				kept[j].ext.limit = max(kept[j].ext.limit, sp.ext.limit)
				continue
			}
		}
		kept = append(kept, sp)
	}
	s.spans = kept
}

// frontier returns the stream offset before which no span not yet decided
// can start (all of the stream at its end): what may be released.
func (s *stream) frontier() int64 {
	f := s.pos - int64(s.m.ac.holdBack(s.st, s.buf))
	for _, c := range s.cands {
		f = min(f, c.from)
	}
	// Remembered values: those whose spans end before f are final; their
	// later occurrences, and a possible one cut by the end of the buffer,
	// bound what may be released.
	f = min(f, s.repeatsSettle(f), s.lscan)
	if s.eof {
		f = math.MaxInt64
	}
	return f
}

// tentative is Writer.Tentative: the held suffix when the keyword
// automaton's hold is all that keeps it, and every keyword it may begin
// has a Detector (the text of one without is the secret itself).
func (s *stream) tentative() []byte {
	if s.err != nil || s.eof || s.inRun || len(s.spans) > 0 || s.rel >= s.pos {
		return nil
	}
	if len(s.rep.vals) > 0 && s.rep.scan < s.pos || s.lscan < s.pos {
		return nil // a remembered value or a literal may begin in the held bytes
	}
	for _, c := range s.cands {
		if c.from < s.pos {
			return nil // a detector's value may begin in the held bytes
		}
	}
	d := s.m.ac.holdBack(s.st, s.buf)
	if d == 0 || s.rel != s.pos-int64(d) || !s.m.ac.holdsPublic(s.st, s.buf, s.m.kws) {
		return nil
	}
	return s.buf[s.rel-s.base : s.pos-s.base]
}

// compact drops from the buffer what candidates, verification and release
// no longer need.
func (s *stream) compact() {
	keep := min(s.rel, s.pos-int64(s.m.hist), s.rep.scan, s.lscan)
	for _, c := range s.cands {
		keep = min(keep, c.start-int64(s.m.back))
	}
	for _, sp := range s.spans {
		if sp.ext.Mode == ExtSet && sp.e-sp.s <= MaxLiteral {
			keep = min(keep, sp.s) // its value may be remembered when it closes (learn)
		}
	}
	// Only when the dead prefix is at least as long as what stays, so that
	// one-byte writes do not copy the whole window each time (amortized O(1)
	// per byte).
	if keep > s.base && keep-s.base >= s.pos-keep {
		n := copy(s.buf, s.buf[keep-s.base:])
		s.buf = s.buf[:n]
		s.base = keep
	}
}

// sameOpen returns the index of an open span in spans that grows like sp.
func sameOpen(spans []span, sp *span) int {
	for j := len(spans) - 1; j >= 0; j-- {
		o := &spans[j]
		if o.ext.Mode == sp.ext.Mode && o.ext.Set == sp.ext.Set && o.ext.m == sp.ext.m && o.e == sp.e &&
			(o.ext.Mode != extLit || &o.ext.lit[0] == &sp.ext.lit[0]) {
			return j
		}
	}
	return -1
}

// release writes out everything before the frontier f that is final.
func (s *stream) release(f int64) {
	// The runs take spans from the front of the slice; what is left goes
	// back to the start of its array, whose room the next spans reuse.
	arr := s.spans[:0]
	defer func() {
		s.spans = append(arr, s.spans...)
		s.flushOut()
	}()
	for s.err == nil {
		if s.inRun {
			// The spans are in order of their starts and runEnd only grows
			// with the ones the run takes, so those are a prefix; the open
			// ones among them stay, just before the rest. Only the prefix
			// is touched (a whole read held by Stage may hold thousands of
			// spans: filtering all of them per run was quadratic).
			open := 0
			i := 0
			for ; i < len(s.spans) && s.spans[i].s <= s.runEnd; i++ {
				sp := s.spans[i]
				s.runEnd = max(s.runEnd, sp.e)
				if sp.ext.Mode != ExtNone {
					s.spans[open] = sp
					open++
				}
			}
			copy(s.spans[i-open:], s.spans[:open])
			s.spans = s.spans[i-open:]
			if end := min(max(s.rel, s.runEnd), s.pos); end > s.rel && s.obs != nil {
				s.obs.Dropped(s.buf[s.rel-s.base : end-s.base])
			}
			s.rel = max(s.rel, s.runEnd)
			if open > 0 || f <= s.runEnd {
				return
			}
			s.inRun = false
			if s.obs != nil {
				s.obs.End(s.runEnd)
			}
			continue
		}
		next := int64(math.MaxInt64)
		if len(s.spans) > 0 {
			next = s.spans[0].s
		}
		if lim := min(f, next, s.pos); lim > s.rel {
			s.out(s.buf[s.rel-s.base : lim-s.base])
			s.rel = lim
		}
		if len(s.spans) == 0 || f <= next {
			return
		}
		s.out(s.m.markers[s.spans[0].kind])
		s.replaced++
		if s.obs != nil {
			s.obs.Start(next, s.spans[0].kind)
		}
		s.inRun = true
		s.runEnd = next
	}
}

// out adds b to what release writes, in one Write when it ends (flushOut):
// output full of markers, a piece of text and a marker in turn, made a
// Write per piece, and a system call per piece behind --tee. b stays
// valid until then (buf is compacted after release).
func (s *stream) out(b []byte) {
	if s.err != nil || len(b) == 0 {
		return
	}
	switch {
	case len(s.joined) > 0:
		s.joined = append(s.joined, b...)
	case s.pend == nil:
		s.pend = b
	default:
		s.joined = append(append(s.joined, s.pend...), b...)
		s.pend = nil
	}
}

// flushOut writes what out gathered.
func (s *stream) flushOut() {
	b := s.pend
	if len(s.joined) > 0 {
		b = s.joined
	}
	s.pend, s.joined = nil, s.joined[:0]
	if cap(s.joined) > 1<<20 {
		s.joined = nil // kept for the next release, unless it was a large one
	}
	if s.err != nil || len(b) == 0 {
		return
	}
	if _, err := s.dst.Write(b); err != nil {
		s.err = err
	}
}
