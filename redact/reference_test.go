package redact

import (
	"bytes"
	"slices"
	"sort"
)

// reference is the whole-buffer redactor the streaming Writer must agree
// with: it finds every keyword occurrence with bytes.Index (on an ASCII
// lower-cased copy for case-insensitive keywords), asks the same
// detectors for their spans over the whole rest of the buffer, unites the
// spans and writes one marker per merged run. It shares the detectors (the
// catalogue's definition) but none of the streaming machinery.
func reference(m *matcher, in []byte) ([]byte, int64) {
	var sink refSink
	eval := func(d detector, start, kw int) {
		end := min(len(in), start+d.window(kw))
		sink.base = start
		sink.in = in
		pending, _ := d.eval(in[start:end], in[max(0, start-lookBack(d)):start], kw, true, &sink)
		if pending {
			panic("detector pending on a final window")
		}
	}
	folded := make([]byte, len(in))
	for i, c := range in {
		folded[i] = fold(c)
	}
	for _, k := range m.kws {
		n := len(k.text)
		hay, needle := in, k.text
		if !k.exact {
			hay, needle = folded, bytes.ToLower(k.text)
		}
		for i := 0; i+n <= len(in); i++ {
			j := bytes.Index(hay[i:], needle)
			if j < 0 {
				break
			}
			i += j
			if k.det == nil {
				sink.spans = append(sink.spans, span{s: int64(i), e: int64(i + n), kind: k.kind})
				continue
			}
			eval(k.det, i, n)
		}
	}
	if m.lineDet != nil {
		eval(m.lineDet, 0, 0)
	}
	// Remembered values (repeat.go): in order of their spans' ends, each
	// masks its occurrences from its end on.
	learned := sink.learned
	sort.SliceStable(learned, func(i, j int) bool {
		a, b := learned[i], learned[j]
		return a.e < b.e || a.e == b.e && (a.s < b.s || a.s == b.s && a.kind < b.kind)
	})
	var vals []repValue
	for _, it := range learned {
		v := in[it.s:it.e]
		if !learnable(v) || len(vals) >= MemoryValues || slices.ContainsFunc(vals, func(o repValue) bool { return bytes.Equal(o.v, v) }) {
			continue
		}
		vals = append(vals, repValue{v: v, kind: it.kind, from: it.e})
	}
	for _, v := range vals {
		for p := int(v.from); p < len(in); p++ {
			k := bytes.Index(in[p:], v.v)
			if k < 0 {
				break
			}
			p += k
			sink.spans = append(sink.spans, span{s: int64(p), e: int64(p + len(v.v)), kind: v.kind})
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
		out = append(out, m.markers[run.kind]...)
		n++
		pos = run.e
	}
	out = append(out, in[pos:]...)
	return out, n
}

type refSink struct {
	in      []byte
	base    int
	spans   []span
	learned []span // closed detector spans: their values are remembered
}

func (r *refSink) add(s, e int, kind int32, ext extender) {
	sp := span{s: int64(r.base + s), e: int64(r.base + e), kind: kind}
	if sp.e <= sp.s {
		return
	}
	if ext.mode != extNone {
		ext.limit = sp.e + int64(ext.max)
		n, _ := ext.feed(r.in[sp.e:], sp.e)
		sp.e += int64(n)
	} else {
		r.learned = append(r.learned, sp)
	}
	r.spans = append(r.spans, sp)
}
