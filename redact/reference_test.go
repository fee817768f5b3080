package redact

import (
	"bytes"
	"slices"
	"sort"

	"github.com/capwrap/capwrap/redact/internal/match"
	"github.com/capwrap/capwrap/redact/internal/scan"
)

// reference is the whole-buffer redactor the streaming Writer must agree
// with: it finds every keyword occurrence with bytes.Index (on an ASCII
// lower-cased copy for case-insensitive keywords), asks the same
// detectors for their spans over the whole rest of the buffer, grows
// open-ended spans over the rest of the buffer at once, unites the spans
// and writes one marker per merged run. It shares p's keywords, detectors
// and markers (the catalogue's definition) but none of the streaming
// machinery of internal/match.
func reference(p *Policy, in []byte) ([]byte, int64) {
	var sink refSink
	eval := func(d match.Detector, start, kw int) {
		end := min(len(in), start+match.RawWindow(d.Window(kw)))
		sink.base = start
		sink.in = in
		pending, _ := match.EvalDisplay(d, d.Window(kw), in[start:end], in[max(0, start-lookBack(d)):start], kw, true, &sink)
		if pending {
			panic("detector pending on a final window")
		}
	}
	folded := make([]byte, len(in))
	for i, c := range in {
		folded[i] = scan.Lower(c)
	}
	for _, k := range p.kws {
		hay, needle := in, k.Text
		if !k.Exact {
			hay, needle = folded, bytes.ToLower(k.Text)
		}
		// A literal longer than match.MaxLiteral is found by its first
		// MaxLiteral bytes and takes as many of the following bytes as
		// continue it.
		long := k.Det == nil && k.Exact && len(needle) > match.MaxLiteral
		if long {
			needle = needle[:match.MaxLiteral]
		}
		n := len(needle)
		for i := 0; i+n <= len(in); i++ {
			j := bytes.Index(hay[i:], needle)
			if j < 0 {
				break
			}
			i += j
			if k.Det == nil {
				e := i + n
				for long && e < len(in) && e-i < len(k.Text) && in[e] == k.Text[e-i] {
					e++
				}
				sink.spans = append(sink.spans, refSpan{s: int64(i), e: int64(e), kind: k.Kind})
				continue
			}
			eval(k.Det, i, n)
		}
	}
	if p.line != nil {
		eval(p.line, 0, 0)
	}
	// Remembered values (remember.go): in order of their spans' ends, each
	// masks its occurrences from its end on.
	learned := sink.learned
	sort.SliceStable(learned, func(i, j int) bool {
		a, b := learned[i], learned[j]
		return a.e < b.e || a.e == b.e && (a.s < b.s || a.s == b.s && a.kind < b.kind)
	})
	type value struct {
		v    []byte
		kind int32
		from int64
	}
	var vals []value
	size := 0
	for _, it := range learned {
		if it.e-it.s > match.MaxLiteral {
			continue
		}
		v := learnable(match.StripDisplay(in[it.s:it.e]))
		if v == nil || len(vals) >= MemoryValues || size+len(v) > MemoryBytes || slices.ContainsFunc(vals, func(o value) bool { return bytes.Equal(o.v, v) }) {
			continue
		}
		size += len(v)
		vals = append(vals, value{v: v, kind: it.kind, from: it.e})
	}
	for _, v := range vals {
		for p := int(v.from); p < len(in); p++ {
			k := bytes.Index(in[p:], v.v)
			if k < 0 {
				break
			}
			p += k
			sink.spans = append(sink.spans, refSpan{s: int64(p), e: int64(p + len(v.v)), kind: v.kind})
		}
	}
	spans := sink.spans
	sort.SliceStable(spans, func(i, j int) bool {
		return spans[i].s < spans[j].s || spans[i].s == spans[j].s && spans[i].kind < spans[j].kind
	})
	var out []byte
	var n int64
	pos := int64(0)
	for i := 0; i < len(spans); {
		run := spans[i]
		i++
		for i < len(spans) && spans[i].s <= run.e {
			run.e = max(run.e, spans[i].e)
			i++
		}
		out = append(out, in[pos:run.s]...)
		out = append(out, p.markers[run.kind]...)
		n++
		pos = run.e
	}
	out = append(out, in[pos:]...)
	return out, n
}

// lookBack is how many bytes before its keyword a detector is shown: two,
// or more for a match.Backer.
func lookBack(d match.Detector) int {
	if b, ok := d.(match.Backer); ok {
		return max(b.Back(), 2)
	}
	return 2
}

// grow returns how many of b, the bytes after an open-ended span, the span
// takes (see match.Extender): at most x.Max of them; for ExtSet, while they
// are in x.Set; for ExtPEM, up to the end of the first "-----" after the
// first "-----END".
func grow(x match.Extender, b []byte) int {
	b = b[:min(len(b), x.Max)]
	switch x.Mode {
	case match.ExtSet:
		for i, c := range b {
			if !x.Set[c] {
				return i
			}
		}
	case match.ExtPEM:
		k := bytes.Index(b, []byte("-----END"))
		if k < 0 {
			break
		}
		k += len("-----END")
		if e := bytes.Index(b[k:], []byte("-----")); e >= 0 {
			return k + e + len("-----")
		}
	}
	return len(b)
}

type refSpan struct {
	s, e int64
	kind int32
}

type refSink struct {
	in      []byte
	base    int
	spans   []refSpan
	learned []refSpan // closed detector spans: their values are remembered
}

func (r *refSink) Add(s, e int, kind int32, ext match.Extender) {
	sp := refSpan{s: int64(r.base + s), e: int64(r.base + e), kind: kind}
	if sp.e <= sp.s {
		return
	}
	if ext.Mode != match.ExtNone {
		n := grow(ext, r.in[sp.e:])
		sp.e += int64(n)
		if ext.Mode == match.ExtSet && n < ext.Max {
			r.learned = append(r.learned, sp) // closed by its value's end (issue 27)
		}
	} else {
		r.learned = append(r.learned, sp)
	}
	r.spans = append(r.spans, sp)
}
