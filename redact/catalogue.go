package redact

import (
	"github.com/capwrap/capwrap/redact/internal/match"
	"github.com/capwrap/capwrap/redact/internal/scan"
)

// The built-in catalogue of credential shapes (SPEC §6 source 2). Each entry
// names the kind written in its marker, the keywords that trigger it and the
// detector that decides. Keywords marked exact are case-sensitive; the others
// match in any ASCII case. The tests hold, for every entry, a format-valid
// fake that must be masked and a near miss that must not be.
//
// Decisions on near misses: token shapes need their exact length and
// alphabet and must not sit inside a longer word (git hashes and UUIDs never
// match); sk_test_/rk_test_/pk_live_ are not live secret keys. Assignments
// (password=, secret:, token=, api_key:, also "--password VALUE") mask the
// value only, and leave alone: an empty value, a placeholder (****, xxxx,
// $VAR, ${VAR}, %s, {{x}}, <angle>, {brace}, null, none, true, false, an
// earlier [REDACTED marker), a longer key word (tokenizer, passwords), a path
// (/etc/passwd:), a comparison (password == x), prose after a colon
// ("passwd: all tokens updated"), and for secret/token/api-key a value under
// 8 bytes or all digits (max_tokens: 4096). Passwords of any length count.

// catalogueEntry is one named credential shape.
type catalogueEntry struct {
	kind     string
	keywords []string
	exact    bool
	det      func(kind func(string) int32) match.Detector
}

func prefix(kind string, body string, min, max int, overlong bool) func(func(string) int32) match.Detector {
	return func(k func(string) int32) match.Detector {
		return &prefixDet{kind: k(kind), body: scan.NewSet(body), min: min, max: max, left: setAlnum, overlong: overlong}
	}
}

// assign is an assignment entry (assign.go): a value given to a key that
// holds the keyword. lenient: any literal counts, not only random-looking
// ones (passwords); word: the keyword must begin a word or a camelCase part
// (pass, pwd, auth: not bypass, compass); whole: nothing may follow it in
// the key's name.
func assign(kind string, minLen int, lenient, word, whole bool) func(func(string) int32) match.Detector {
	return func(k func(string) int32) match.Detector {
		return &assignDet{kind: k(kind), minLen: minLen, lenient: lenient, word: word, whole: whole}
	}
}

// builtinCatalogue lists the built-in shapes in priority order: when two
// spans start at the same byte, the marker names the earlier entry. The
// token-shape rows of shapes.go are inserted into it at first use
// (fullCatalogue), which is what a policy compiles. A function, not a
// package variable: its keyword lists and detector constructors are built
// only by a run that compiles a policy, not in every capwrap's init
// (issue 28).
func builtinCatalogue() []catalogueEntry {
	return []catalogueEntry{
		// AKIA (access key), ASIA (temporary), ABIA (STS service bearer token),
		// ACCA (context-specific credential): the unique-ID prefixes of
		// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids
		{kind: "aws-access-key-id", keywords: []string{"AKIA", "ASIA", "ABIA", "ACCA"}, exact: true,
			det: func(k func(string) int32) match.Detector {
				// Exactly 16 base32 characters, not inside a longer word.
				return &prefixDet{kind: k("aws-access-key-id"), body: scan.NewSet("A-Z2-7"), min: 16, max: 16, left: setAlnum, right: setAlnum}
			}},
		{kind: "aws-secret-access-key", keywords: []string{"aws_secret_access_key", "aws_secret_key", "secretaccesskey", "aws-secret-access-key"},
			det: func(k func(string) int32) match.Detector {
				return &assignDet{kind: k("aws-secret-access-key"), minLen: 40, valueSet: scan.NewSet("A-Za-z0-9/+="), valueLen: 40}
			}},
		{kind: "github-pat", keywords: []string{"ghp_"}, exact: true, det: prefix("github-pat", "A-Za-z0-9", 36, 251, true)},
		{kind: "github-oauth-token", keywords: []string{"gho_"}, exact: true, det: prefix("github-oauth-token", "A-Za-z0-9", 36, 251, true)},
		{kind: "github-user-token", keywords: []string{"ghu_"}, exact: true, det: prefix("github-user-token", "A-Za-z0-9", 36, 251, true)},
		{kind: "github-app-token", keywords: []string{"ghs_"}, exact: true, det: prefix("github-app-token", "A-Za-z0-9", 36, 251, true)},
		{kind: "github-refresh-token", keywords: []string{"ghr_"}, exact: true, det: prefix("github-refresh-token", "A-Za-z0-9", 36, 251, true)},
		{kind: "github-fine-grained-pat", keywords: []string{"github_pat_"}, exact: true, det: prefix("github-fine-grained-pat", "A-Za-z0-9_", 70, 251, true)},
		{kind: "gitlab-pat", keywords: []string{"glpat-"}, exact: true, det: prefix("gitlab-pat", "A-Za-z0-9_.-", 20, 251, true)},
		{kind: "gitlab-token", keywords: []string{"glrt-", "gldt-", "glptt-", "glcbt-", "glft-"}, exact: true, det: prefix("gitlab-token", "A-Za-z0-9_.-", 20, 251, true)},
		{kind: "slack-bot-token", keywords: []string{"xoxb-"}, exact: true, det: prefix("slack-bot-token", "A-Za-z0-9-", 10, 251, true)},
		{kind: "slack-user-token", keywords: []string{"xoxp-"}, exact: true, det: prefix("slack-user-token", "A-Za-z0-9-", 10, 251, true)},
		{kind: "slack-token", keywords: []string{"xoxa-", "xoxr-", "xoxs-", "xoxe-", "xoxe.xoxp-"}, exact: true, det: prefix("slack-token", "A-Za-z0-9-", 10, 251, true)},
		{kind: "slack-app-token", keywords: []string{"xapp-"}, exact: true, det: prefix("slack-app-token", "A-Za-z0-9-", 10, 251, true)},
		{kind: "slack-webhook", keywords: []string{"hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/"},
			det: func(k func(string) int32) match.Detector {
				return &prefixDet{kind: k("slack-webhook"), body: scan.NewSet("A-Za-z0-9/_-"), min: 20, max: 251, afterKw: true, overlong: true}
			}},
		{kind: "discord-webhook", keywords: []string{"discord.com/api/webhooks/", "discordapp.com/api/webhooks/"},
			det: func(k func(string) int32) match.Detector {
				return &prefixDet{kind: k("discord-webhook"), body: scan.NewSet("A-Za-z0-9/_-"), min: 40, max: 251, afterKw: true, overlong: true}
			}},
		{kind: "discord-bot-token", keywords: discordKeywords(), exact: true,
			det: func(k func(string) int32) match.Detector { return &discordDet{kind: k("discord-bot-token")} }},
		{kind: "stripe-live-secret-key", keywords: []string{"sk_live_"}, exact: true, det: prefix("stripe-live-secret-key", "A-Za-z0-9", 20, 251, true)},
		{kind: "stripe-restricted-key", keywords: []string{"rk_live_"}, exact: true, det: prefix("stripe-restricted-key", "A-Za-z0-9", 20, 251, true)},
		{kind: "anthropic-api-key", keywords: []string{"sk-ant-"}, exact: true, det: prefix("anthropic-api-key", "A-Za-z0-9_-", 40, 251, true)},
		{kind: "openai-api-key", keywords: []string{"sk-proj-", "sk-svcacct-", "sk-admin-"}, exact: true, det: prefix("openai-api-key", "A-Za-z0-9_-", 40, 251, true)},
		{kind: "google-api-key", keywords: []string{"AIza"}, exact: true, det: prefix("google-api-key", "A-Za-z0-9_-", 35, 35, false)},
		{kind: "npm-token", keywords: []string{"npm_"}, exact: true, det: prefix("npm-token", "A-Za-z0-9", 36, 36, false)},
		{kind: "pypi-token", keywords: []string{"AgEIcHlwaS5vcmc"}, exact: true, det: func(k func(string) int32) match.Detector {
			// The keyword is the fixed base64 of the macaroon header, after "pypi-".
			return &prefixDet{kind: k("pypi-token"), body: scan.NewSet("A-Za-z0-9_-"), min: 50, max: 400, left: scan.NewSet("-").Not(), overlong: true}
		}},
		{kind: "huggingface-token", keywords: []string{"hf_"}, exact: true, det: prefix("huggingface-token", "A-Za-z", 34, 34, false)},
		{kind: "digitalocean-token", keywords: []string{"dop_v1_", "doo_v1_", "dor_v1_"}, exact: true, det: prefix("digitalocean-token", "a-f0-9", 64, 64, false)},
		{kind: "jwt", keywords: []string{"eyJ"}, exact: true,
			det: func(k func(string) int32) match.Detector { return &jwtDet{kind: k("jwt")} }},
		{kind: "private-key", keywords: []string{"-----BEGIN "}, exact: true,
			det: func(k func(string) int32) match.Detector { return &pemDet{kind: k("private-key")} }},
		{kind: "bearer-token", keywords: []string{"authorization"},
			det: func(k func(string) int32) match.Detector {
				return &authDet{bearer: k("bearer-token"), basic: k("basic-auth"), other: k("authorization")}
			}},
		{kind: "bearer-token", keywords: []string{"bearer"},
			det: func(k func(string) int32) match.Detector { return &bearerDet{kind: k("bearer-token")} }},
		{kind: "url-password", keywords: []string{"://", `:\/\/`}, exact: true,
			det: func(k func(string) int32) match.Detector { return &urlPassDet{kind: k("url-password")} }},
		{kind: "cli-password", keywords: cliKeywords(), exact: true,
			det: func(k func(string) int32) match.Detector { return &cliDet{kind: k("cli-password")} }},
		{kind: "netrc-password", keywords: []string{"machine"},
			det: func(k func(string) int32) match.Detector { return &netrcDet{kind: k("netrc-password")} }},
		{kind: "cookie", keywords: []string{"cookie"},
			det: func(k func(string) int32) match.Detector { return &cookieDet{kind: k("cookie")} }},
		{kind: "password", keywords: []string{"password", "passwd", "passphrase", "storepass", "keypass"}, det: assign("password", 1, true, false, false)},
		{kind: "password", keywords: []string{"IDENTIFIED BY", "identified by"}, exact: true, det: assign("password", 1, true, false, false)},
		{kind: "password", keywords: []string{"pwd"}, det: assign("password", 1, true, true, false)},
		// "pass" as a whole key only: its keywords carry the byte after it, so
		// that PASSED, passes and compass (every line of a test log) are no
		// candidates at all.
		{kind: "password", keywords: []string{"pass=", "pass:", "pass\"", "pass'", "pass ", "pass\t", "pass\\", "pass>", "pass%", "pass&"},
			det: func(k func(string) int32) match.Detector {
				return &lastByteKw{&assignDet{kind: k("password"), minLen: 1, lenient: true, word: true, whole: true}}
			}},
		{kind: "secret", keywords: []string{"secret"}, det: assign("secret", 8, false, false, false)},
		{kind: "token", keywords: []string{"token"}, det: func(k func(string) int32) match.Detector {
			return &assignDet{kind: k("token"), minLen: 8, notAfter: nonSecretPrefixSet()}
		}},
		{kind: "api-key", keywords: []string{"api_key", "api-key", "apikey"}, det: assign("api-key", 8, false, false, false)},
		{kind: "credential", keywords: []string{"credential", "credentials", "creds"}, det: assign("credential", 8, false, true, false)},
		{kind: "auth", keywords: []string{"auth"}, det: assign("auth", 8, false, true, false)},
		{kind: "key", keywords: []string{
			"private_key", "private-key", "privatekey", "encryption_key", "encryption-key", "encryptionkey",
			"signing_key", "signing-key", "signingkey", "master_key", "master-key", "masterkey",
			"access_key", "access-key", "accesskey", "account_key", "accountkey", "shared_key", "sharedkey",
			"client_key", "client-key", "clientkey", "client-key-data", "client_key_data", "dockerconfigjson", "dockercfg",
			"tls.key", "tls_key", "tls-key",
		}, det: assign("key", 8, false, false, false)},
		// Any other name that ends in the word "key", with a random-looking
		// value (keyname.go; gitleaks' generic-api-key rule).
		{kind: "key", keywords: genericKeyKeywords, det: func(k func(string) int32) match.Detector {
			return &lastByteKw{&assignDet{kind: k("key"), minLen: 8, word: true, whole: true, notAfter: notSecretKeyPrefixSet(), randomOnly: true}}
		}},
		// Every value of a Kubernetes Secret's data and stringData maps
		// (k8ssecret.go).
		{kind: "secret", keywords: k8sKeywords(false, false), exact: true, det: k8sData(false, false)},
		{kind: "secret", keywords: k8sKeywords(true, false), exact: true, det: k8sData(true, false)},
		{kind: "secret", keywords: k8sKeywords(false, true), exact: true, det: k8sData(false, true)},
		{kind: "secret", keywords: k8sKeywords(true, true), exact: true, det: k8sData(true, true)},
		{kind: "session", keywords: []string{"session", "sessid"}, det: assign("session", 16, false, true, false)},
		{kind: "signature", keywords: []string{"sig", "signature"}, det: assign("signature", 16, false, true, false)},
	}
}

// discordKeywords returns the first three characters of the base64 of every
// two-digit start of a numeric id ("10" → "MTA" ... "99" → "OTk"... ): a
// Discord bot token starts with the base64 of its bot's id.
func discordKeywords() []string {
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var out []string
	for d0 := '1'; d0 <= '9'; d0++ {
		for d1 := '0'; d1 <= '9'; d1++ {
			out = append(out, string([]byte{b64[d0>>2], b64[(d0&3)<<4|d1>>4], b64[(d1&15)<<2]}))
		}
	}
	return out
}

// Catalogue returns the kind names the built-in catalogue can write in a
// marker, in priority order (SPEC §6 source 2).
func Catalogue() []string {
	var names []string
	seen := map[string]bool{}
	reg := func(n string) int32 {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
		return 0
	}
	for _, e := range fullCatalogue() {
		reg(e.kind)
		e.det(reg)
	}
	return names
}
