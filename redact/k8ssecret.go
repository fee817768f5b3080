package redact

import (
	"encoding/base64"
	"unicode/utf8"

	"github.com/capwrap/capwrap/redact/internal/match"
	"github.com/capwrap/capwrap/redact/internal/scan"
)

// Kubernetes Secrets (issue 27): every value of a Secret's "data" map is a
// secret, base64-encoded, under a key of any name (password, tls.crt,
// anything); every value of "stringData" is one in clear
// (https://kubernetes.io/docs/concepts/configuration/secret/, "data" and
// "stringData"; API reference: Secret v1, "data: map[string][]byte ...
// base64 encoded string"). kubectl prints the fields in alphabetical order
// (`kubectl get secret -o yaml`: apiVersion, data, kind, metadata, type),
// so "kind: Secret" comes after the values, past where a stream can wait
// for it; and a ConfigMap's "data" map, which holds no secrets, has the
// same shape. What tells them apart is the value: a Secret's is base64 of
// its bytes, and those bytes are text (a password, a PEM block, a
// .dockerconfigjson) or a long binary blob; a ConfigMap's is text that is
// seldom valid base64 and, decoded, never text (info, postgres,
// Europe/Paris). So under "data:" a value is masked when it is base64
// (standard alphabet, padded, as the API server writes it) that decodes to
// UTF-8 text, or is 64 bytes or more of base64. Under "stringData:" every
// value is masked.
//
// Bound: the detector reads the map within k8sWindow bytes of its key; a
// value that starts there and runs past it is masked to its end as it
// arrives; entries that start further on are not read (a tls.key, or a
// key named like a secret, is still masked by its name).

// k8sWindow is how far after "data:" the entries of the map are read, in
// bytes: the stream's largest holdback (a JWT's window), not more.
const k8sWindow = jwtWindow

// k8sDataDet reads the map after a "data:" or "stringData:" key (YAML, the
// keyword ends with the newline) or after `"data": {` (JSON).
type k8sDataDet struct {
	kind  int32
	clear bool // stringData: every value, not only base64 text
	json  bool // the keyword ends with the map's "{"
}

// k8sKeywords returns the keywords of the detector: the YAML and JSON
// spellings of the key, as kubectl prints them, and the JSON one inside a
// JSON string (the last-applied-configuration annotation).
func k8sKeywords(clear, json bool) []string {
	name := "data"
	if clear {
		name = "stringData"
	}
	if json {
		return []string{`"` + name + `": {`, `"` + name + `":{`, `\"` + name + `\": {`, `\"` + name + `\":{`}
	}
	return []string{name + ":\n", name + ":\r\n"}
}

func (d *k8sDataDet) Window(int) int { return k8sWindow }

// Back: the YAML key's indentation, and whether it begins its line.
func (d *k8sDataDet) Back() int { return 64 }

func (d *k8sDataDet) AfterKeyword() bool { return true }

var (
	setB64Std = scan.NewSet("A-Za-z0-9+/=")
	setSecKey = scan.NewSet("A-Za-z0-9._-") // a Secret's keys (Kubernetes: [-._a-zA-Z0-9]+)
)

func (d *k8sDataDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	if d.json {
		return d.evalJSON(w, kw, final, sink)
	}
	// The key must begin its line, after blanks or a list's "- ".
	base := 0
	for k := len(pre) - 1; ; k-- {
		if k < 0 {
			if len(pre) == d.Back() {
				return false, 0 // a line too long to be a YAML key's
			}
			break
		}
		if pre[k] == '\n' {
			break
		}
		if pre[k] != ' ' && !(pre[k] == '-' && k+1 < len(pre) && pre[k+1] == ' ') {
			return false, 0
		}
		base++
	}
	type span struct {
		s, e int
		ext  bool
	}
	var spans []span
	child, block := -1, false
	i := kw
	for {
		if i == len(w) {
			if !final {
				return true, kw
			}
			break
		}
		n := 0
		for i+n < len(w) && w[i+n] == ' ' {
			n++
		}
		le := i + n
		for le < len(w) && w[le] != '\n' {
			le++
		}
		if le == len(w) && !final {
			return true, kw
		}
		line := w[i+n : le]
		cut := le == len(w) && len(w) >= k8sWindow // the window ends inside this line
		next := min(le+1, len(w))
		if len(line) == 0 || len(line) == 1 && line[0] == '\r' {
			i = next // a blank line
			continue
		}
		if n <= base || child >= 0 && n < child {
			break // the map has ended
		}
		if child < 0 {
			if line[0] == '-' {
				break // a list, not a map
			}
			child = n
		}
		if n > child {
			// A line of a block value (key: |): the value itself under
			// stringData, part of a text (not base64) under data.
			if block && d.clear {
				spans = append(spans, span{i + n, i + n + trimEnd(line), cut})
			}
			i = next
			continue
		}
		// "name: value"
		k := scan.Skip(line, 0, setSecKey, len(line))
		if k == 0 || k == len(line) || line[k] != ':' {
			break
		}
		vs := k + 1
		for vs < len(line) && setBlank[line[vs]] {
			vs++
		}
		v := line[vs:trimEnd(line)]
		block = len(v) > 0 && (v[0] == '|' || v[0] == '>')
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
			vs++
		}
		s := i + n + vs
		switch {
		case len(v) == 0 || block:
		case d.clear:
			if !placeholder(v) {
				spans = append(spans, span{s, s + len(v), cut})
			}
		case cut:
			if len(v) >= 16 && scan.Skip(v, 0, setB64Std, len(v)) == len(v) {
				spans = append(spans, span{s, s + len(v), true})
			}
		case b64Text(v):
			spans = append(spans, span{s, s + len(v), false})
		}
		i = next
	}
	for _, sp := range spans {
		ext := match.Extender{}
		if sp.ext {
			set := setB64Std
			if d.clear {
				set = setLine
			}
			ext = match.Extender{Mode: match.ExtSet, Set: set, Max: extendMax}
		}
		if sp.e > sp.s {
			sink.Add(sp.s, sp.e, d.kind, ext)
		}
	}
	return false, 0
}

// trimEnd returns the length of line without its trailing blanks and
// carriage return.
func trimEnd(line []byte) int {
	e := len(line)
	for e > 0 && (line[e-1] == ' ' || line[e-1] == '\t' || line[e-1] == '\r') {
		e--
	}
	return e
}

// evalJSON reads the map of `"data": {"name": "value", ...}` from w[kw:],
// its quotes those of the keyword: " or, in a JSON string (the
// last-applied-configuration annotation of `kubectl get -o json`), \".
func (d *k8sDataDet) evalJSON(w []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	q := `"`
	if w[0] == '\\' {
		q = `\"`
	}
	type span struct{ s, e int }
	var spans []span
	ws := func(i int) int {
		for i < len(w) && (w[i] == ' ' || w[i] == '\t' || w[i] == '\n' || w[i] == '\r') {
			i++
		}
		return i
	}
	// quote reads q at w[i]: Yes, No, or More when w ends inside it.
	quote := func(i int) scan.Lex { return scan.HasAt(w, i, q, false) }
	i := kw
	for {
		i = ws(i)
		if i == len(w) {
			if !final {
				return true, kw
			}
			break
		}
		st := quote(i)
		if st == scan.More && !final {
			return true, kw
		}
		if st != scan.Yes {
			break // "}", or not a map of strings
		}
		k := scan.Skip(w, i+len(q), setSecKey, len(w))
		st = quote(k)
		if st == scan.More && !final {
			return true, kw
		}
		if st != scan.Yes {
			break
		}
		i = ws(k + len(q))
		if i == len(w) && !final {
			return true, kw
		}
		if i == len(w) || w[i] != ':' {
			break
		}
		i = ws(i + 1)
		st = quote(i)
		if st == scan.More && !final {
			return true, kw
		}
		if st != scan.Yes {
			break
		}
		s := i + len(q)
		e := s
		for e < len(w) && w[e] != '\n' {
			if w[e] == '\\' {
				if len(q) > 1 && (e+1 == len(w) || w[e+1] == '"') {
					break // the closing \" (or w ends inside it)
				}
				e++
			} else if len(q) == 1 && w[e] == '"' {
				break
			}
			e++
		}
		if e >= len(w) || len(q) > 1 && e+1 >= len(w) {
			if !final {
				return true, kw
			}
			e = min(e, len(w))
			if d.clear || e-s >= 16 && scan.Skip(w, s, setB64Std, e) == e {
				set := setB64Std
				if d.clear {
					set = quoteSets()['"']
				}
				sink.Add(s, e, d.kind, match.Extender{Mode: match.ExtSet, Set: set, Max: extendMax})
			}
			break
		}
		if quote(e) != scan.Yes {
			break
		}
		if v := w[s:e]; len(v) > 0 && (d.clear && !placeholder(v) || !d.clear && b64Text(v)) {
			spans = append(spans, span{s, e})
		}
		i = ws(e + len(q))
		if i < len(w) && w[i] == ',' {
			i++
		}
	}
	for _, sp := range spans {
		sink.Add(sp.s, sp.e, d.kind, match.Extender{})
	}
	return false, 0
}

// b64Text reports whether v is standard, padded base64 (the API server's
// encoding of a Secret's bytes) of UTF-8 text without control bytes but
// tab and line ends, or 64 bytes or more of it (a binary key or keystore).
func b64Text(v []byte) bool {
	if len(v) < 4 || len(v)%4 != 0 {
		return false
	}
	for k, c := range v {
		if !setB64Std[c] || c == '=' && k < len(v)-2 {
			return false
		}
	}
	buf := make([]byte, base64.StdEncoding.DecodedLen(len(v)))
	n, err := base64.StdEncoding.Decode(buf, v)
	if err != nil {
		return false
	}
	if len(v) >= 64 {
		return true
	}
	b := buf[:n]
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return false
		}
	}
	return true
}

// k8sData is the catalogue's constructor of a k8sDataDet.
func k8sData(clear, json bool) func(func(string) int32) match.Detector {
	return func(k func(string) int32) match.Detector {
		return &k8sDataDet{kind: k("secret"), clear: clear, json: json}
	}
}
