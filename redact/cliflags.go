package redact

import (
	"bytes"
	"sync"

	"github.com/capwrap/capwrap/redact/internal/match"
	"github.com/capwrap/capwrap/redact/internal/scan"
)

// Command lines (SPEC §6 "command-line flags", issue 27): where a command
// line that carries a password ends, which of its arguments is a password
// given by position, and which flags named after a password take none.

// cmdLineEnd returns the end of the command line that starts at w[kw]: the
// first CR or LF not after a backslash (a shell continues a line that ends
// with one: "mysql \\\n  -pVALUE db"), or len(w).
func cmdLineEnd(w []byte, kw int) int {
	e := kw
	for e < len(w) {
		switch w[e] {
		case '\n':
			if !continued(w, kw, e) {
				return e
			}
		case '\r':
			if e+1 < len(w) && w[e+1] == '\n' && continued(w, kw, e) {
				e++
				break
			}
			if e+1 == len(w) && continued(w, kw, e) {
				return e + 1 // a CRLF cut by the window: wait for its LF
			}
			return e
		}
		e++
	}
	return e
}

// continued reports whether the line end at w[e] follows a backslash that
// continues the line (one that is not itself escaped).
func continued(w []byte, kw, e int) bool {
	n := 0
	for k := e - 1; k >= kw && w[k] == '\\'; k-- {
		n++
	}
	return n%2 == 1
}

// cmdBlank reports whether line[i] separates the words of a command line: a
// blank, a line end, or a backslash that continues the line.
func cmdBlank(line []byte, i int) bool {
	switch c := line[i]; {
	case setBlank[c] || c == '\n' || c == '\r':
		return true
	case c == '\\':
		return i+1 < len(line) && (line[i+1] == '\n' || line[i+1] == '\r')
	}
	return false
}

// cliValue reports whether v, the value of a password option or argument,
// is a password: not empty, no placeholder ($PASS, ****), not "-" (read
// from standard input), no reference (openssl's env:NAME, file:PATH) and
// no file path (az login -p CERT.pem).
func cliValue(v []byte) bool {
	return len(v) > 0 && !placeholder(v) && string(v) != "-" &&
		!bytes.HasPrefix(v, []byte("env:")) && !bytes.HasPrefix(v, []byte("file:")) && !path(v)
}

// cliSpan narrows w[vs:ve], the word given as a password, to the value it
// holds when the command line is quoted in a string (Go, JSON, markdown):
// an escaped quote opens and closes it (vault login \"$VAULT_TOKEN\"), an
// escaped line end that only punctuation follows ends the line
// ("sqlcmd -P password\n",), and a markdown code span's closing backtick
// and the punctuation after it are not part of it (`curl -u user:X`,).
func cliSpan(w []byte, vs, ve int) (int, int) {
	if ve > vs && vs+1 < len(w) && w[vs] == '\\' && (w[vs+1] == '"' || w[vs+1] == '\'') {
		// The word splitter stops at the quote: the value runs to the
		// escaped quote that closes it, on this line.
		q := w[vs+1]
		vs += 2
		ve = vs
		for ve < len(w) && w[ve] != '\n' && !(w[ve] == '\\' && ve+1 < len(w) && w[ve+1] == q) {
			ve++
		}
	}
	for k := vs; k+1 < ve; k++ {
		if w[k] == '\\' && (w[k+1] == 'n' || w[k+1] == 'r' || w[k+1] == 't') && !bytes.ContainsFunc(w[k+2:ve], func(r rune) bool { return r < 0x80 && setAlnum[byte(r)] }) {
			ve = k
			break
		}
	}
	return vs, vs + trimValue(w[vs:ve])
}

// positional returns the arguments of words that are not options, in
// order: an option ("-x", "--name", "--name=v") is skipped, and so is the
// word after one of takesValue ("-C 10").
func positional(w []byte, words []shellWord, takesValue func(opt []byte) bool) []shellWord {
	var out []shellWord
	for k := 0; k < len(words); k++ {
		a := w[words[k].s:words[k].e]
		if len(a) > 1 && a[0] == '-' {
			if takesValue != nil && takesValue(a) {
				k++
			}
			continue
		}
		out = append(out, words[k])
	}
	return out
}

// htpasswdPassword finds the password of "htpasswd -b[c...] FILE USER
// PASSWORD" or "htpasswd -nb USER PASSWORD" (htpasswd(1): -b takes the
// password from the command line; -n prints the entry instead of writing a
// FILE; -C cost and -r rounds take a value).
func htpasswdPassword(w []byte, words []shellWord) (int, int) {
	batch, display := false, false
	for _, wd := range words {
		a := w[wd.s:wd.e]
		if len(a) > 1 && a[0] == '-' && a[1] != '-' {
			batch = batch || bytes.IndexByte(a, 'b') > 0
			display = display || bytes.IndexByte(a, 'n') > 0
		}
	}
	if !batch {
		return -1, -1
	}
	args := positional(w, words, func(opt []byte) bool {
		last := opt[len(opt)-1]
		return opt[1] != '-' && (last == 'C' || last == 'r')
	})
	k := 2 // FILE USER PASSWORD
	if display {
		k = 1 // USER PASSWORD
	}
	if k >= len(args) {
		return -1, -1
	}
	return args[k].s, args[k].e
}

// rabbitmqPassword finds the password of rabbitmqctl's add_user,
// change_password and authenticate_user USERNAME PASSWORD (rabbitmqctl(8)).
func rabbitmqPassword(w []byte, words []shellWord) (int, int) {
	args := positional(w, words, func(opt []byte) bool {
		switch string(opt) {
		case "-n", "--node", "-t", "--timeout", "--vhost", "-p":
			return true
		}
		return false
	})
	for k, a := range args {
		switch string(w[a.s:a.e]) {
		case "add_user", "change_password", "authenticate_user":
			if k+2 < len(args) {
				return args[k+2].s, args[k+2].e
			}
			return -1, -1
		}
	}
	return -1, -1
}

// vaultToken finds the token of "vault login TOKEN" (Vault's login
// command: the token method, the default, takes the token as its first
// argument; with -method=NAME the arguments are K=V pairs, read as
// assignments).
func vaultToken(w []byte, words []shellWord) (int, int) {
	args := positional(w, words, nil)
	for k, a := range args {
		if string(w[a.s:a.e]) != "login" {
			continue
		}
		for _, wd := range words {
			if bytes.HasPrefix(w[wd.s:wd.e], []byte("-method")) {
				return -1, -1
			}
		}
		if k+1 < len(args) && bytes.IndexByte(w[args[k+1].s:args[k+1].e], '=') < 0 {
			return args[k+1].s, args[k+1].e
		}
		return -1, -1
	}
	return -1, -1
}

// oracleLogon finds the password of SQL*Plus's logon, the first argument
// that is not an option: USERNAME/PASSWORD[@CONNECT_IDENTIFIER] (the
// password runs from the first "/" to the last "@"); "/" alone, or
// "/@db", is an operating-system or wallet logon with no password.
func oracleLogon(w []byte, words []shellWord) (int, int) {
	args := positional(w, words, nil)
	if len(args) == 0 {
		return -1, -1
	}
	a := w[args[0].s:args[0].e]
	sl := bytes.IndexByte(a, '/')
	if sl <= 0 {
		return -1, -1
	}
	e := len(a)
	if at := bytes.LastIndexByte(a, '@'); at > sl {
		e = at
	}
	if e == sl+1 {
		return -1, -1
	}
	return args[0].s + sl + 1, args[0].s + e
}

// switchBefore are words that, before a password keyword in a flag's name,
// make the flag a switch that takes no password: --no-password,
// --disabled-password (adduser(8)), --ask-password, --skip-password
// (mysql(1)), --ask-become-pass (ansible), --with-token (gh auth login reads
// it from standard input), --empty-password, --prompt-password.
var switchBefore = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"no": true, "disable": true, "disabled": true, "ask": true, "prompt": true, "skip": true,
		"without": true, "with": true, "empty": true, "allow": true, "require": true,
		"random": true, "generate": true, "expire": true, "lock": true, "unlock": true, "delete": true,
		"show": true, "print": true,
	}
})

// switchAfter are words that, after the keyword, make the flag say where a
// password comes from or how it is asked, not give it: --password-stdin
// (docker login), --passphrase-fd (gpg(1)), --passphrase-file,
// --password-prompt, --passphrase-repeat N (gpg(1)), --password-command,
// --password-from-stdin.
var switchAfter = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"stdin": true, "fd": true, "file": true, "prompt": true, "repeat": true, "command": true,
		"cmd": true, "env": true, "from": true,
	}
})

// flagSwitch reports whether a command-line flag whose name holds a
// password keyword takes no password (issue 27: "a flag is never a value";
// see switchBefore and switchAfter): head is the name before the keyword,
// dashes included ("--disabled-"), name the keyword and the rest of the
// name ("password-stdin").
func flagSwitch(head, name []byte) bool {
	for _, f := range bytes.FieldsFunc(head, nameSep) {
		if switchBefore()[string(bytes.ToLower(f))] {
			return true
		}
	}
	for k, f := range bytes.FieldsFunc(name, nameSep) {
		if k > 0 && switchAfter()[string(bytes.ToLower(f))] {
			return true
		}
	}
	return false
}

func nameSep(r rune) bool { return r == '-' || r == '_' || r == '.' }

// flagAt reports whether the word at w[i] is a command-line option ("-u",
// "--no-create-home", "--user=x"): a dash, then a letter or a dash, then
// letters, digits, dashes and underscores up to a blank, a line end, "="
// or a quote. It is then no flag's value (issue 27: a flag is never a value).
// More when w ends first.
func flagAt(w []byte, i int) scan.Lex {
	if i == len(w) {
		return scan.More
	}
	if w[i] != '-' {
		return scan.No
	}
	k := i + 1
	if k == len(w) {
		return scan.More
	}
	if !setLetter[w[k]] && w[k] != '-' {
		return scan.No
	}
	for ; k < len(w); k++ {
		switch c := w[k]; {
		case setBlank[c] || c == '\n' || c == '\r' || c == '=' || c == '"' || c == '\'' || c == '\\':
			return scan.Yes // also the quote that closes an item of a list: ["--password", "--no-verify"]
		case !setAlnum[c] && c != '-' && c != '_':
			return scan.No
		}
	}
	return scan.More
}

// flagShaped is flagAt for a whole argument, as Policy.Label reads argv.
func flagShaped(a string) bool {
	return flagAt([]byte(a+" "), 0) == scan.Yes
}

// netUsePassword finds the password of Windows' "net use [DEVICE]
// \\\\COMPUTER\\SHARE PASSWORD [/user:NAME]": the argument after the share
// that is no /option; "*" asks for it.
func netUsePassword(w []byte, words []shellWord) (int, int) {
	args := positional(w, words, nil)
	if len(args) == 0 || string(w[args[0].s:args[0].e]) != "use" {
		return -1, -1
	}
	for k := 1; k+1 < len(args); k++ {
		if !bytes.HasPrefix(w[args[k].s:args[k].e], []byte(`\\`)) {
			continue
		}
		v := w[args[k+1].s:args[k+1].e]
		if v[0] == '/' || string(v) == "*" {
			return -1, -1
		}
		return args[k+1].s, args[k+1].e
	}
	return -1, -1
}

// mcSecretKey finds the secret key of "mc alias set ALIAS URL ACCESSKEY
// SECRETKEY" (MinIO client).
func mcSecretKey(w []byte, words []shellWord) (int, int) {
	args := positional(w, words, nil)
	for k := 0; k+5 < len(args); k++ {
		if string(w[args[k].s:args[k].e]) == "alias" && string(w[args[k+1].s:args[k+1].e]) == "set" {
			return args[k+5].s, args[k+5].e
		}
	}
	return -1, -1
}

// awsConfigureSecret finds the value of "aws configure set NAME VALUE"
// when NAME is a secret's (aws_secret_access_key, aws_session_token, also
// as profile.NAME).
func awsConfigureSecret(w []byte, words []shellWord) (int, int) {
	args := positional(w, words, nil)
	for k := 0; k+3 < len(args); k++ {
		if string(w[args[k].s:args[k].e]) != "configure" || string(w[args[k+1].s:args[k+1].e]) != "set" {
			continue
		}
		name := bytes.ToLower(w[args[k+2].s:args[k+2].e])
		if bytes.HasSuffix(name, []byte("aws_secret_access_key")) || bytes.HasSuffix(name, []byte("aws_session_token")) {
			return args[k+3].s, args[k+3].e
		}
		return -1, -1
	}
	return -1, -1
}

// argvList splits line, the rest of an argument list after its first
// item's closing quote q (`, "-uroot", "-pVALUE"]`), which starts at offset
// base of the window, into its items: each quoted with q, separated by
// commas and blanks, up to anything else (the "]").
func argvList(line []byte, base int, q byte) []shellWord {
	var out []shellWord
	i := 0
	for {
		for i < len(line) && (line[i] == ',' || setBlank[line[i]]) {
			i++
		}
		if i == len(line) || line[i] != q {
			return out
		}
		j := bytes.IndexByte(line[i+1:], q)
		if j < 0 {
			return out
		}
		out = append(out, shellWord{s: base + i + 1, e: base + i + 1 + j})
		i += j + 2
	}
}

// listValue reads the value of a flag in an argument list, from w[i] just
// after the comma that follows the flag's closing quote: ["--password",
// "VALUE"]. The next item must be quoted and no flag.
func (d *assignDet) listValue(w []byte, i int, c valueCtx, final bool, sink match.SpanSink) (bool, int) {
	i = scan.Skip(w, i, setBlank, assignBlankMax)
	q, st := scan.QuoteAt(w, i)
	switch {
	case st == scan.More:
		return scan.Wait(final, i)
	case q.N == 0:
		return false, 0
	}
	return d.itemValue(w, i, q, c, final, sink)
}

// yamlItem reports whether pre, the bytes before a flag, end a YAML list
// item's start: blanks, "- " and an opening quote, if any (Kubernetes'
// args:, Ansible's argv:).
func yamlItem(pre []byte) bool {
	i := len(pre)
	if i > 0 && (pre[i-1] == '"' || pre[i-1] == '\'') {
		i--
	}
	if i < 2 || pre[i-1] != ' ' || pre[i-2] != '-' {
		return false
	}
	for i -= 2; i > 0 && setBlank[pre[i-1]]; i-- {
	}
	return i == 0 || pre[i-1] == '\n' || pre[i-1] == '\r'
}

// nextItem reads the value of a flag that ends a YAML list item, from the
// line end at w[i]: the next line must be another item ("  - VALUE"),
// which is the value unless it is a flag.
func (d *assignDet) nextItem(w []byte, i int, c valueCtx, final bool, sink match.SpanSink) (bool, int) {
	if w[i] == '\r' {
		i++
	}
	if i == len(w) {
		return scan.Wait(final, i)
	}
	if w[i] != '\n' {
		return false, 0
	}
	i = scan.Skip(w, i+1, setBlank, assignBlankMax)
	switch scan.HasAt(w, i, "- ", false) {
	case scan.More:
		return scan.Wait(final, i)
	case scan.No:
		return false, 0
	}
	i += 2
	q, st := scan.QuoteAt(w, i)
	if st == scan.More {
		return scan.Wait(final, i)
	}
	return d.itemValue(w, i, q, c, final, sink)
}

// itemValue reads the value of a flag at w[i] (after its opening quote q,
// if any), on its own line or list item: a value unless it is itself a
// flag.
func (d *assignDet) itemValue(w []byte, i int, q scan.Quote, c valueCtx, final bool, sink match.SpanSink) (bool, int) {
	switch flagAt(w, i+q.N) {
	case scan.More:
		return scan.Wait(final, i)
	case scan.Yes:
		return false, 0
	}
	c.strong, c.wordy = true, true
	return d.value(w, i, c, final, sink)
}
