package receipt

import (
	"strconv"
	"unicode/utf8"
)

// The footers' JSON is written by hand, as encoding/json's Encoder with
// HTML escaping off would write it (footerjson_test.go checks the two
// agree): the footer is printed by every run in preview and quiet mode,
// and encoding/json's first use of a type (the reflection behind its
// encoder cache) costs 0.5 to 3 ms, on the path of each run, where
// these functions take microseconds.

// appendJSON appends f's JSON object.
func (f *compactFooter) appendJSON(b []byte) []byte {
	b = append(b, `{"exit_status":`...)
	b = appendInt(b, f.ExitStatus)
	b = append(b, `,"process":{"exit_code":`...)
	b = appendInt(b, f.Process.ExitCode)
	b = append(b, `},"capture":{"state":`...)
	b = appendString(b, string(f.Capture.State))
	return append(b, "}}"...)
}

// appendJSON appends f's JSON object; its omitempty fields are left out
// when nil (or 0), as encoding/json leaves them.
func (f *shortFooter) appendJSON(b []byte) []byte {
	b = append(b, '{')
	if f.ID != nil {
		b = append(b, `"id":`...)
		b = appendString(b, *f.ID)
		b = append(b, ',')
	}
	if f.Dir != nil {
		b = append(b, `"dir":`...)
		b = appendString(b, *f.Dir)
		b = append(b, ',')
	}
	b = append(b, `"exit_status":`...)
	b = appendInt(b, f.ExitStatus)
	p := &f.Process
	b = append(b, `,"process":{"state":`...)
	b = appendString(b, string(p.State))
	if p.PID != nil {
		b = append(b, `,"pid":`...)
		b = appendInt(b, p.PID)
	}
	if p.ExitCode != nil {
		b = append(b, `,"exit_code":`...)
		b = appendInt(b, p.ExitCode)
	}
	b = appendOptString(b, `,"signal":`, p.Signal)
	b = appendOptString(b, `,"reason":`, p.Reason)
	c := &f.Capture
	b = append(b, `},"capture":{"state":`...)
	b = appendString(b, string(c.State))
	if c.Reason != nil {
		b = append(b, `,"reason":`...)
		b = appendString(b, string(*c.Reason))
	}
	b = appendOptString(b, `,"error":`, c.Error)
	b = append(b, '}')
	if r := f.Redaction; r != nil {
		b = append(b, `,"redaction":{`...)
		sep := ""
		if r.Enabled != nil {
			b = append(b, `"enabled":`...)
			b = strconv.AppendBool(b, *r.Enabled)
			sep = ","
		}
		if r.Replaced != 0 {
			b = append(b, sep+`"replaced":`...)
			b = strconv.AppendInt(b, r.Replaced, 10)
		}
		b = append(b, '}')
	}
	if s := f.Streams; s != nil {
		b = append(b, `,"streams":{`...)
		if s.Stdout != nil {
			b = s.Stdout.appendJSON(append(b, `"stdout":`...))
			if s.Stderr != nil {
				b = append(b, ',')
			}
		}
		if s.Stderr != nil {
			b = s.Stderr.appendJSON(append(b, `"stderr":`...))
		}
		b = append(b, '}')
	}
	if d := f.Descendants; d != nil {
		b = append(b, `,"descendants":{"count":`...)
		b = strconv.AppendInt(b, int64(d.Count), 10)
		b = append(b, `,"action":`...)
		b = appendString(b, d.Action)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendJSON appends s's JSON object.
func (s *shortStream) appendJSON(b []byte) []byte {
	b = append(b, '{')
	n := len(b)
	field := func(name string) {
		if len(b) > n {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
	}
	for _, v := range []struct {
		name string
		v    *int64
	}{{"observed_bytes", s.ObservedBytes}, {"committed_bytes", s.CommittedBytes}, {"lines", s.Lines}} {
		if v.v != nil {
			field(v.name)
			b = strconv.AppendInt(b, *v.v, 10)
		}
	}
	if pv := s.Preview; pv != nil {
		field("preview")
		b = append(b, `{"state":`...)
		b = appendString(b, pv.State)
		if pv.OmittedBytes != nil {
			b = append(b, `,"omitted_bytes":`...)
			b = strconv.AppendInt(b, *pv.OmittedBytes, 10)
		}
		if pv.OmittedLines != nil {
			b = append(b, `,"omitted_lines":`...)
			b = strconv.AppendInt(b, *pv.OmittedLines, 10)
		}
		b = append(b, '}')
	}
	if a := s.Accounting; a != nil {
		field("accounting")
		b = append(b, '{')
		sep := ""
		if a.Pending != 0 {
			b = append(b, `"pending":`...)
			b = strconv.AppendInt(b, a.Pending, 10)
			sep = ","
		}
		if a.Discarded != 0 {
			b = append(b, sep+`"discarded":`...)
			b = strconv.AppendInt(b, a.Discarded, 10)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendInt appends *v, or null for nil.
func appendInt(b []byte, v *int) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*v), 10)
}

// appendOptString appends key and *v when v is not nil (omitempty).
func appendOptString(b []byte, key string, v *string) []byte {
	if v == nil {
		return b
	}
	return appendString(append(b, key...), *v)
}

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it with HTML escaping off: '"' and '\\', control bytes (\b, \f,
// \n, \r, \t, else \u00XX), invalid UTF-8 as \ufffd, and U+2028 and
// U+2029.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
