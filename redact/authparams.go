package redact

import (
	"sync"

	"github.com/capwrap/capwrap/redact/internal/match"
	"github.com/capwrap/capwrap/redact/internal/scan"
)

// Authorization schemes whose credentials are a list of parameters
// (RFC 9110 §11.4: credentials = auth-scheme [ 1*SP ( token68 /
// #auth-param ) ], auth-param = token BWS "=" BWS ( token /
// quoted-string )) rather than one token68: HTTP Digest (RFC 7616 §3.4),
// AWS Signature Version 4
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html),
// OAuth 1.0 (RFC 5849 §3.5.1). Only the parameters that are credentials are
// masked; the others (username, realm, uri, nonce, qop, Credential's key id
// and scope, SignedHeaders, oauth_consumer_key) say who asked for what and
// stay visible (issue 27: "Digest username=" was masked and the response
// hash shown).

// authParamsMax bounds the parameter list read after a scheme, in bytes.
const authParamsMax = 1024

// credentialParams are the auth-params whose values are credentials: the
// Digest response (RFC 7616 §3.4.1, a hash of the password that can be
// replayed for its nonce and attacked offline), the SigV4 Signature and
// the OAuth 1.0 signature and token (RFC 5849 §3.5.1), and the tokens and
// passwords of ad hoc schemes (Rails' "Token token=...").
var credentialParams = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"response": true, "signature": true, "sig": true, "oauth_signature": true, "oauth_token": true,
		"token": true, "access_token": true, "password": true, "passwd": true, "secret": true, "client_secret": true,
	}
})

var (
	setParamName  = scan.NewSet("A-Za-z0-9_.-")
	setParamValue = scan.NewSet(" ,;\"'\\").Union(setControl).Not()
)

// authParams reads the credentials at w[vs:], after a scheme, as an
// auth-param list and masks the values of credentialParams (as kind). It
// returns done false when they are no list (a token68: "Basic dXNlcg==");
// else done true and Eval's result.
func authParams(w []byte, vs int, final bool, kind int32, sink match.SpanSink) (done, pending bool, from int) {
	// A list starts with token "=" and a byte that is not "=" (a token68
	// ends with its padding).
	i := scan.Skip(w, vs, setParamName, assignNameMax+1)
	if i == len(w) {
		if !final {
			return true, true, vs
		}
		return false, false, 0
	}
	if i == vs || i-vs > assignNameMax {
		return false, false, 0
	}
	j := scan.Skip(w, i, setBlank, assignBlankMax)
	if j+1 >= len(w) {
		if !final {
			return true, true, vs
		}
		return false, false, 0
	}
	if w[j] != '=' || w[j+1] == '=' || w[j+1] == '\n' || w[j+1] == '\r' || w[j+1] == ',' {
		return false, false, 0
	}
	type span struct{ s, e int }
	var spans []span
	lim := min(len(w), vs+authParamsMax)
	i = vs
params:
	for {
		for i < lim && (setBlank[w[i]] || w[i] == ',') {
			i++
		}
		if i == len(w) && !final {
			return true, true, vs
		}
		ns := i
		i = scan.Skip(w[:lim], i, setParamName, assignNameMax+1)
		if i == len(w) && !final {
			return true, true, vs
		}
		if i == lim || i == ns || i-ns > assignNameMax {
			break
		}
		name := w[ns:i]
		i = scan.Skip(w[:lim], i, setBlank, assignBlankMax)
		if i == len(w) && !final {
			return true, true, vs
		}
		if i == lim || w[i] != '=' {
			break
		}
		i = scan.Skip(w[:lim], i+1, setBlank, assignBlankMax)
		if i+1 >= len(w) && !final {
			return true, true, vs
		}
		if i >= lim {
			break
		}
		// The value: a quoted-string ("...", or \"...\" inside a JSON
		// string) or a token.
		var s, e int
		switch {
		case w[i] == '"' || w[i] == '\\' && i+1 < lim && w[i+1] == '"':
			esc := w[i] == '\\'
			s = i + 1
			if esc {
				s++
			}
			e = s
			for e < lim && w[e] != '\n' {
				if esc && w[e] == '\\' && e+1 < lim && w[e+1] == '"' {
					break
				}
				if !esc && w[e] == '"' {
					break
				}
				if !esc && w[e] == '\\' {
					e++
				}
				e++
			}
			if e >= lim || w[e] == '\n' {
				if e >= len(w) && !final {
					return true, true, vs
				}
				e = min(e, lim)
				if credentialParams()[lowerString(name)] && e > s {
					spans = append(spans, span{s, e}) // cut: masked as far as it goes
				}
				break params
			}
			i = e + 1
			if esc {
				i++
			}
		default:
			s = i
			e = scan.Skip(w[:lim], i, setParamValue, authParamsMax)
			if e == len(w) && !final {
				return true, true, vs
			}
			i = e
		}
		if e > s && credentialParams()[lowerString(name)] && !placeholder(w[s:e]) {
			spans = append(spans, span{s, e})
		}
	}
	for _, sp := range spans {
		sink.Add(sp.s, sp.e, kind, match.Extender{})
	}
	return true, false, 0
}

// lowerString returns b in lower case, as a string.
func lowerString(b []byte) string {
	out := make([]byte, len(b))
	for k, c := range b {
		out[k] = scan.Lower(c)
	}
	return string(out)
}
