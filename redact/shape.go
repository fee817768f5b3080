package redact

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/capwrap/capwrap/redact/internal/match"
	"github.com/capwrap/capwrap/redact/internal/scan"
)

// shapeDet is the generic detector of the token-shape rows (shapes.go): after
// its keyword, a fixed sequence of literal text and runs of an alphabet with
// a length range, which is what providers document of their formats
// ("dt0c01." + 24 + "." + 64 upper-case alphanumerics, "SG." + 22 + "." + 43
// base64url characters). prefixDet is its one-run case; this one also takes
// formats with inner separators, a marker in the middle (OpenAI's
// "T3BlbkFJ") or a keyword that needs the bytes before it.
//
// Matching is greedy and never backtracks: a run takes every byte of its
// alphabet up to its maximum (more is no match, or for an open last run the
// start of a span that grows while its alphabet lasts), except a run of a
// fixed length n that is followed by another part, which takes exactly n
// bytes (so a literal made of the run's own alphabet can follow it). The
// byte after a last run is never of its alphabet, so the token does not sit
// inside a longer word; the byte before the keyword is checked with glued,
// as for prefixDet.
type shapeDet struct {
	kind  int32
	parts []shapePart
	after bool          // the span starts after the keyword (a URL's secret part), not at it
	left  *scan.ByteSet // no match when the byte before the keyword is in left (glued)
	need  *scan.ByteSet // if set, the two bytes before the keyword must both be in need
	win   int           // bytes after the keyword eval may look at
}

// shapePart is a literal (lit != "") or a run of set of min to max bytes.
type shapePart struct {
	lit      string
	set      *scan.ByteSet
	min, max int
	open     bool // last run only: a run over max is masked and dropped while it lasts
}

// shapeOpenMax is the length past which an open run ({n,}) is masked as it
// arrives rather than decided: the bound prefixDet's rows use.
const shapeOpenMax = 251

// parseShape reads the notation of a row's shape: literal bytes, and runs
// written "[set]{n}", "[set]{n,m}" or "[set]{n,}" (open: any length from n,
// the part past shapeOpenMax masked as it arrives; last run only), where set
// is newSet's spec. A backslash makes the next byte literal.
func parseShape(spec string) ([]shapePart, error) {
	var parts []shapePart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, shapePart{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(spec); i++ {
		c := spec[i]
		switch c {
		case '\\':
			if i+1 == len(spec) {
				return nil, fmt.Errorf("shape %q: trailing backslash", spec)
			}
			i++
			lit.WriteByte(spec[i])
		case '[':
			end := strings.IndexByte(spec[i+1:], ']')
			if end < 1 {
				return nil, fmt.Errorf("shape %q: unclosed set", spec)
			}
			set := spec[i+1 : i+1+end]
			i += end + 2
			if i >= len(spec) || spec[i] != '{' {
				return nil, fmt.Errorf("shape %q: set without {length}", spec)
			}
			rb := strings.IndexByte(spec[i:], '}')
			if rb < 0 {
				return nil, fmt.Errorf("shape %q: unclosed length", spec)
			}
			lens := spec[i+1 : i+rb]
			i += rb
			p := shapePart{set: scan.NewSet(set)}
			lo, hi, ranged := strings.Cut(lens, ",")
			var err error
			if p.min, err = strconv.Atoi(lo); err != nil || p.min < 1 {
				return nil, fmt.Errorf("shape %q: bad length %q", spec, lens)
			}
			switch {
			case !ranged:
				p.max = p.min
			case hi == "":
				p.max, p.open = shapeOpenMax, true
			default:
				if p.max, err = strconv.Atoi(hi); err != nil || p.max < p.min {
					return nil, fmt.Errorf("shape %q: bad length %q", spec, lens)
				}
			}
			flush()
			parts = append(parts, p)
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	for k, p := range parts {
		last := k == len(parts)-1
		if p.open && !last {
			return nil, fmt.Errorf("shape %q: only the last run may be open", spec)
		}
		if p.lit == "" && !last && p.min != p.max {
			// A greedy run must stop before what follows it.
			next := parts[k+1]
			if next.lit == "" || p.set[next.lit[0]] {
				return nil, fmt.Errorf("shape %q: run %d cannot tell where it ends", spec, k)
			}
		}
	}
	if len(parts) == 0 || parts[len(parts)-1].lit != "" {
		return nil, fmt.Errorf("shape %q: must end with a run", spec)
	}
	return parts, nil
}

// newShapeDet builds the detector of a shape (see parseShape).
func newShapeDet(kind int32, spec string, afterKw bool, left, need *scan.ByteSet) *shapeDet {
	parts, err := parseShape(spec)
	if err != nil {
		panic(err)
	}
	d := &shapeDet{kind: kind, parts: parts, after: afterKw, left: left, need: need, win: 1}
	for _, p := range parts {
		if p.lit != "" {
			d.win += len(p.lit)
		} else {
			d.win += p.max
		}
	}
	return d
}

func (d *shapeDet) Window(kw int) int { return kw + d.win }

func (d *shapeDet) Back() int { return glueBack }

func (d *shapeDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	if d.left != nil && glued(pre, d.left) {
		return false, 0
	}
	if n := len(pre); d.need != nil && (n < 2 || !d.need[pre[n-2]] || !d.need[pre[n-1]]) {
		return false, 0
	}
	from := 0
	if d.after {
		from = kw
	}
	i := kw
	for k, p := range d.parts {
		if p.lit != "" {
			n := min(len(p.lit), len(w)-i)
			if string(w[i:i+n]) != p.lit[:n] {
				return false, 0
			}
			if n < len(p.lit) {
				return scan.Wait(final, from)
			}
			i += n
			continue
		}
		j := i
		if p.min == p.max && k < len(d.parts)-1 {
			for i < len(w) && i-j < p.min && p.set[w[i]] {
				i++
			}
			if i-j < p.min {
				if i == len(w) {
					return scan.Wait(final, from)
				}
				return false, 0
			}
			continue
		}
		i = scan.Skip(w, i, p.set, p.max+1)
		n := i - j
		if n > p.max {
			if p.open {
				sink.Add(from, i, d.kind, match.Extender{Mode: match.ExtSet, Set: p.set, Max: extendMax})
			}
			return false, 0
		}
		if i == len(w) && !final {
			return true, from
		}
		if n < p.min {
			return false, 0
		}
	}
	sink.Add(from, i, d.kind, match.Extender{})
	return false, 0
}
