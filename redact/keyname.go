package redact

import (
	"bytes"
	"sync"

	"github.com/capwrap/capwrap/redact/internal/scan"
)

// Key names (SPEC §6 "keys in camelCase and compound forms", issue 27): a
// name that ends in the word "key" (license_key, fooKey, STRIPE_KEY, a bare
// Key=) holds a secret when its value looks random. This is the class of
// gitleaks' generic-api-key rule, whose keywords include "key" and which
// asks the value for an entropy of 3.5 bits a byte
// (https://github.com/gitleaks/gitleaks, cmd/generate/config/rules/generic.go).
// "key" is everywhere in code and logs (sort_key=created_at, primaryKey: id,
// cache_key=users:42, keyboard, monkey), so here the value must look random
// whatever the context (keyRandom), the key word must begin a word or a
// camelCase part (not monkey, hotkey, pubkey), and a word before it that says
// the key is no credential (public, primary, sort, cache) rules it out.

// genericKeyKeywords are the keywords of the generic key rule: "key" and
// the byte after it that ends the name (a separator, a closing quote, a
// blank, an XML element's ">"), so that the words that merely contain "key"
// (keyboard, keys, keyword) are no candidates at all.
var genericKeyKeywords = []string{"key=", "key:", "key\"", "key'", "key ", "key\t", "key\\", "key>", "key%", "key&"}

// notSecretKeyPrefixSet is notSecretKeyPrefix as lastWordIn looks it up.
var notSecretKeyPrefixSet = sync.OnceValue(func() *wordSet { return newWordSet(notSecretKeyPrefix()) })

// notSecretKeyPrefix are the words that, right before "key", name a key
// that is no credential: database and cache keys, public keys, keys of a
// map, a GPG key id to receive.
func notSecretKeyPrefix() map[string]bool {
	return map[string]bool{
		"public": true, "pub": true, "publishable": true, "primary": true, "foreign": true, "unique": true,
		"sort": true, "partition": true, "range": true, "hash": true, "cache": true, "routing": true,
		"idempotency": true, "dedup": true, "dedupe": true, "deduplication": true, "row": true, "map": true,
		"lookup": true, "group": true, "object": true, "s3": true, "host": true, "index": true, "composite": true,
		"lock": true, "cursor": true, "page": true, "next": true, "shard": true, "bucket": true, "message": true,
		"event": true, "trace": true, "correlation": true, "label": true, "annotation": true, "field": true,
		"column": true, "translation": true, "i18n": true, "locale": true, "dictionary": true, "dict": true,
		"hot": true, "shortcut": true, "recv": true, "sub": true, "parent": true, "child": true, "item": true,
		"record": true, "entry": true, "resource": true, "metric": true, "search": true, "query": true,
		"filter": true, "order": true, "secondary": true, "natural": true, "surrogate": true, "join": true,
		"cluster": true, "node": true, "music": true, "musical": true, "react": true, "list": true,
	}
}

// keyRandom reports whether v, the value of a generic key, looks random
// enough to be a secret: random (see shape.random) or, when the separators
// of paths and chains (/ . : @) split it, with at least one part of 8 bytes
// or more that is random itself, so that an S3 object key
// (logs/2024-01-05/app-0001.log) or a cache key (users:42:profile) stays,
// and a base64 secret with slashes (wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY)
// is masked.
func keyRandom(v []byte) bool {
	if bytes.IndexAny(v, "/.:@") < 0 {
		return shapeOf(v).random() || randomLetters(v) || randomNumber(v)
	}
	for len(v) > 0 {
		k := bytes.IndexAny(v, "/.:@")
		part := v
		if k >= 0 {
			part, v = v[:k], v[k+1:]
		} else {
			v = nil
		}
		if len(part) >= 8 && shapeOf(part).random() {
			return true
		}
	}
	return false
}

// codeChain reports whether v is a chain of three or more short fields
// joined by colons, none of them random by itself: a status or reason code
// (macOS Wi-Fi's "sts:5_rsn:0", an ARN's or URN's fields), not a credential
// (issue 27: "AuthFail:sts:5_rsn:0" was read as an auth value).
func codeChain(v []byte) bool {
	if bytes.Count(v, []byte(":")) < 2 {
		return false
	}
	for _, part := range bytes.Split(v, []byte(":")) {
		if len(part) >= 8 && shapeOf(part).random() {
			return false
		}
	}
	return true
}

// credentialParts are the camelCase words that may follow a short key word
// (auth, pwd, creds, credential, session, sig) in a key's name and leave it
// a credential's: authToken, sessionId, credsJson. Any other capitalised
// word glued to it makes a name about something else: AuthFail,
// SessionClosed, SigVerified (issue 27).
var credentialParts = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"key": true, "keys": true, "token": true, "tokens": true, "secret": true, "value": true, "val": true,
		"data": true, "string": true, "str": true, "code": true, "hash": true, "header": true, "cookie": true,
		"config": true, "cfg": true, "pass": true, "password": true, "pwd": true, "id": true, "ticket": true,
		"credential": true, "credentials": true, "creds": true, "sig": true, "signature": true, "blob": true,
		"bytes": true, "text": true, "b64": true, "base64": true, "jwt": true, "bearer": true, "basic": true,
		"json": true, "info": true, "param": true, "params": true, "hex": true, "cert": true,
	}
})

// camelPartOK reports, for a word-bound key word, whether the camelCase
// part at w[i] (an upper-case letter, then lower-case letters or digits; or
// an acronym in capitals) is
// one of credentialParts; More when w ends inside the part.
func camelPartOK(w []byte, i int) (bool, scan.Lex) {
	e := i + 1
	if e < len(w) && isUpper(w[e]) {
		for e < len(w) && isUpper(w[e]) {
			e++ // an acronym: sessionID, authJWT
		}
	} else {
		for e < len(w) && (isLower(w[e]) || isDigit(w[e])) {
			e++
		}
	}
	if e == len(w) {
		return false, scan.More
	}
	if e-i > 16 {
		return false, scan.Yes
	}
	var buf [16]byte
	for k, c := range w[i:e] {
		buf[k] = scan.Lower(c)
	}
	return credentialParts()[string(buf[:e-i])], scan.Yes
}

// keySecret decides whether v, the value of a generic key name, is a
// secret: random-looking (keyRandom), no code chain, with no blank, and none
// of what literalSecret rules out for every key (a placeholder, a type
// name, a URL, an ARN, a regular expression; bare: code or a path).
func keySecret(v []byte, quoted bool) bool {
	if len(v) == 0 || !keyRandom(v) || codeChain(v) || bytes.ContainsAny(v, " \t") {
		return false
	}
	if placeholder(v) || typeWord(v) || bytes.Contains(v, []byte("://")) || bytes.HasPrefix(v, []byte("arn:")) || regex(v) {
		return false
	}
	return quoted || !code(v) && !path(v)
}
