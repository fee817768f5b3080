package redact

import (
	"bytes"
	"strings"
	"sync"

	"github.com/capwrap/capwrap/redact/internal/match"
	"github.com/capwrap/capwrap/redact/internal/scan"
)

// Carriers (SPEC §6): the places a secret travels in that have no key word
// before it, or not one an assignment can read: command lines (curl -u
// user:PASS, mysql -pPASS, docker login -p PASS, sshpass -p PASS, redis-cli
// -a PASS), .netrc lines, cookies, and a token as the user of a URL.

// cliFlag is an option of a command whose value is a password.
type cliFlag struct {
	name    string // "-p", "--user"
	glued   bool   // the value may follow in the same word: -pVALUE
	spaced  bool   // the value may be the next word: -p VALUE
	userSep byte   // if set, the value is USER<userSep>PASSWORD (curl's ':', smbclient's '%'): only the password is masked
}

// cliCommand says which options of a command carry a password.
type cliCommand struct {
	names []string // the command's names (keywords)
	verb  string   // if set, this word must come first among the arguments (docker login)
	flags []cliFlag
	// pos, if set, finds a password given as a positional argument
	// (htpasswd -b FILE USER PASSWORD): the span of the value in w, or
	// s < 0. words are the command's arguments, up to a separator.
	pos func(w []byte, words []shellWord) (s, e int)
}

// The sources of each row are cited beside it (issue 27: every carrier
// cites the tool's own manual).
var cliCommands = []cliCommand{
	// curl(1): -u, --user <user:password>; -U, --proxy-user <user:password>;
	// --oauth2-bearer <token>; --pass <phrase>; --proxy-pass <phrase>;
	// --tlspassword <string>; --proxy-tlspassword <string>. wget(1) is not
	// here: its -U is the user agent, and --password, --http-password are
	// read as assignments (assign.go).
	{names: []string{"curl"}, flags: []cliFlag{
		{name: "-u", glued: true, spaced: true, userSep: ':'},
		{name: "--user", spaced: true, userSep: ':'},
		{name: "--proxy-user", spaced: true, userSep: ':'},
		{name: "-U", glued: true, spaced: true, userSep: ':'},
		{name: "--oauth2-bearer", spaced: true},
		{name: "--pass", spaced: true},
		{name: "--proxy-pass", spaced: true},
		{name: "--tlspassword", spaced: true},
		{name: "--proxy-tlspassword", spaced: true},
	}},
	// mysql(1), mysqladmin(1)...: -p[password], --password[=password].
	{names: []string{"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck", "mariadb", "mariadb-dump"}, flags: []cliFlag{
		{name: "-p", glued: true}, // "-p VALUE" prompts; VALUE is a database
	}},
	// sshpass(1): -p password.
	{names: []string{"sshpass"}, flags: []cliFlag{{name: "-p", glued: true, spaced: true}}},
	// redis-cli: -a <password> (https://redis.io/docs/latest/develop/tools/cli/).
	{names: []string{"redis-cli", "valkey-cli"}, flags: []cliFlag{{name: "-a", glued: true, spaced: true}}},
	// docker login: -p, --password (https://docs.docker.com/reference/cli/docker/login/);
	// podman-login(1), helm registry login, buildah-login(1), skopeo-login(1), oras login, nerdctl login.
	{names: []string{"docker", "podman", "helm", "buildah", "skopeo", "oras", "nerdctl"}, verb: "login", flags: []cliFlag{{name: "-p", glued: true, spaced: true}}},
	// Azure CLI: az login --service-principal -u APP -p PASSWORD
	// (https://learn.microsoft.com/cli/azure/reference-index#az-login);
	// a path there is a certificate, not a password (see cliValue).
	{names: []string{"az"}, verb: "login", flags: []cliFlag{{name: "-p", spaced: true}}},
	// mongosh: -p, --password <password> (https://www.mongodb.com/docs/mongodb-shell/reference/options/).
	{names: []string{"mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport"}, flags: []cliFlag{{name: "-p", spaced: true}}},
	// ldapsearch(1): -w passwd.
	{names: []string{"ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami"}, flags: []cliFlag{{name: "-w", glued: true, spaced: true}}},
	// ldappasswd(1): -w passwd (the bind's), -a oldPasswd, -s newPasswd.
	{names: []string{"ldappasswd"}, flags: []cliFlag{
		{name: "-w", glued: true, spaced: true}, {name: "-a", glued: true, spaced: true}, {name: "-s", glued: true, spaced: true},
	}},
	// lftp(1): -u user[,pass].
	{names: []string{"lftp"}, flags: []cliFlag{{name: "-u", spaced: true, userSep: ','}}},
	// FreeRDP: /p:<password> (https://github.com/FreeRDP/FreeRDP/wiki/CommandLineInterface).
	{names: []string{"xfreerdp", "sdl-freerdp"}, flags: []cliFlag{{name: "/p:", glued: true}}},
	// PuTTY's plink, pscp, psftp: -pw password (PuTTY manual, "-pw: specify
	// a password").
	{names: []string{"plink", "pscp", "psftp"}, flags: []cliFlag{{name: "-pw", spaced: true}}},
	// Samba's net(8): -U|--user=[DOMAIN\]USERNAME[%PASSWORD]; Windows' net
	// use [\\computer\share [password | *]] [/user:...] (Microsoft's "net
	// use" command reference).
	{names: []string{"net"}, pos: netUsePassword, flags: []cliFlag{
		{name: "-U", glued: true, spaced: true, userSep: '%'},
		{name: "--user", spaced: true, userSep: '%'},
	}},
	// MinIO client: mc alias set ALIAS URL ACCESSKEY SECRETKEY
	// (https://min.io/docs/minio/linux/reference/minio-mc/mc-alias-set.html).
	{names: []string{"mc"}, verb: "alias", pos: mcSecretKey},
	// AWS CLI: aws configure set NAME VALUE
	// (https://docs.aws.amazon.com/cli/latest/reference/configure/set.html):
	// the value of aws_secret_access_key, aws_session_token.
	{names: []string{"aws"}, verb: "configure", pos: awsConfigureSecret},
	// openssl-passphrase-options(1): -pass, -passin, -passout arg (pass:VALUE);
	// openssl-enc(1): -k password.
	{names: []string{"openssl"}, flags: []cliFlag{
		{name: "-pass", spaced: true}, {name: "-passin", spaced: true}, {name: "-passout", spaced: true}, {name: "-k", spaced: true},
	}},
	// smbclient(1), rpcclient(1), smbcacls(1): -U|--user=[DOMAIN\]USERNAME[%PASSWORD].
	{names: []string{"smbclient", "rpcclient", "smbcacls"}, flags: []cliFlag{
		{name: "-U", glued: true, spaced: true, userSep: '%'},
		{name: "--user", spaced: true, userSep: '%'},
	}},
	// sqlcmd: -P password (https://learn.microsoft.com/sql/tools/sqlcmd/sqlcmd-utility);
	// bcp: -P password (https://learn.microsoft.com/sql/tools/bcp-utility).
	{names: []string{"sqlcmd", "bcp"}, flags: []cliFlag{{name: "-P", glued: true, spaced: true}}},
	// ipmitool(1): -P password.
	{names: []string{"ipmitool"}, flags: []cliFlag{{name: "-P", glued: true, spaced: true}}},
	// zip(1): -P password, --password password.
	{names: []string{"zip"}, flags: []cliFlag{{name: "-P", glued: true, spaced: true}}},
	// 7-Zip's help (7-zip.chm, Command Line Version, Switches): -p{Password};
	// unrar(1): -p<password>. Glued only: "-p" alone prompts.
	{names: []string{"7z", "unrar", "rar"}, flags: []cliFlag{{name: "-p", glued: true}}},
	// ssh-keygen(1): -N new_passphrase, -P passphrase.
	{names: []string{"ssh-keygen"}, flags: []cliFlag{{name: "-N", glued: true, spaced: true}, {name: "-P", glued: true, spaced: true}}},
	// twine upload: -p, --password PASSWORD (https://twine.readthedocs.io/en/stable/#twine-upload).
	{names: []string{"twine"}, flags: []cliFlag{{name: "-p", spaced: true}}},
	// htpasswd(1) (https://httpd.apache.org/docs/2.4/programs/htpasswd.html):
	// -b takes the password from the command line: htpasswd -b[c] FILE
	// USER PASSWORD, htpasswd -nb USER PASSWORD.
	{names: []string{"htpasswd"}, pos: htpasswdPassword},
	// rabbitmqctl(8): add_user USERNAME PASSWORD, change_password USERNAME
	// NEWPASSWORD, authenticate_user USERNAME PASSWORD.
	{names: []string{"rabbitmqctl"}, pos: rabbitmqPassword},
	// vault login [options] [TOKEN | -] (https://developer.hashicorp.com/vault/docs/commands/login):
	// the token method takes the token as the first argument.
	{names: []string{"vault"}, verb: "login", pos: vaultToken},
	// sqlplus USERNAME/PASSWORD@CONNECT_IDENTIFIER (Oracle SQL*Plus User's
	// Guide, "SQLPLUS Program Syntax"); expdp and impdp take the same logon.
	{names: []string{"sqlplus", "expdp", "impdp"}, pos: oracleLogon},
}

// cliDet finds the password options of a command on its line (a shell
// trace, a CI log, the receipt's command label). Its keywords are the
// commands' names (cliKeywords).
type cliDet struct {
	kind int32
}

// cliByName maps a command's name to its options.
var cliByName = sync.OnceValue(func() map[string]*cliCommand {
	m := map[string]*cliCommand{}
	for i := range cliCommands {
		for _, n := range cliCommands[i].names {
			m[n] = &cliCommands[i]
		}
	}
	return m
})

// cliKeywords returns the names of the commands of cliCommands; a name
// shorter than cliShort bytes (az, mc, 7z, zip) with each byte that may
// follow it (a space, a closing quote: see cliDet.Eval), so that its
// keyword, a fingerprint of the vector prefilter (internal/match/teddy.go),
// is not a two- or three-byte one that lets through a large share of a
// log's positions.
func cliKeywords() []string {
	var out []string
	for _, c := range cliCommands {
		for _, n := range c.names {
			if len(n) >= cliShort {
				out = append(out, n)
				continue
			}
			for _, b := range cliAfterShort {
				out = append(out, n+string(b))
			}
		}
	}
	return out
}

// cliShort is the length of the prefilter's fingerprints (teddyLen): a
// shorter command name gets the byte after it in its keywords.
const cliShort = 4

// cliAfterShort are the bytes that may follow a short command name.
const cliAfterShort = " \"'"

// cliLineMax bounds the command line read after the command's name, in bytes.
const cliLineMax = 1024

func (d *cliDet) Window(kw int) int { return kw + cliLineMax + 1 }

// Back: the command's name may follow a colour (see glued).
func (d *cliDet) Back() int { return glueBack }

// setWordEnd holds the bytes that may follow a command's name.
var setWordEnd = scan.NewSet(" \t")

func (d *cliDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	if glued(pre, setName) {
		return false, 0 // inside a word or a longer name (not after a colour: "\e[0mmysql")
	}
	if kw <= cliShort && strings.IndexByte(cliAfterShort, w[kw-1]) >= 0 {
		kw-- // a short name's keyword ends with the byte after the name (cliKeywords)
	}
	if kw == len(w) {
		return scan.Wait(final, kw)
	}
	start, list := kw, byte(0)
	switch q := w[kw]; {
	case q == '"' || q == '\'':
		// A quoted name: an argv list (["mysql", "-pVALUE"], Python's
		// ['sshpass', '-p', 'VALUE']) or a quoted command ("docker" login).
		if len(pre) == 0 || pre[len(pre)-1] != q {
			return false, 0
		}
		if kw+1 == len(w) {
			return scan.Wait(final, kw)
		}
		switch {
		case w[kw+1] == ',':
			list = q
		case setWordEnd[w[kw+1]]:
			start = kw + 1
		default:
			return false, 0
		}
	case !setWordEnd[q]:
		return false, 0
	}
	cmd := cliByName()[string(w[:kw])]
	if cmd == nil {
		return false, 0
	}
	// The line, up to its end (past a backslash that continues it).
	e := cmdLineEnd(w, kw)
	if e == len(w) && !final {
		return true, kw
	}
	var words []shellWord
	if list != 0 {
		words = argvList(w[kw+1:e], kw+1, list)
	} else {
		words = shellWords(w[start:e], start)
	}
	for k, wd := range words {
		if wd.sep {
			words = words[:k] // the command ends at | ; &
			break
		}
	}
	if cmd.verb != "" {
		// A global option may come first: docker --config x login.
		found := false
		for _, wd := range words {
			if string(w[wd.s:wd.e]) == cmd.verb {
				found = true
				break
			}
		}
		if !found {
			return false, 0
		}
	}
	if cmd.pos != nil {
		if vs, ve := cmd.pos(w, words); vs >= 0 {
			if vs, ve = cliSpan(w, vs, ve); cliValue(w[vs:ve]) {
				sink.Add(vs, ve, d.kind, match.Extender{})
			}
		}
	}
	for k, wd := range words {
		word := w[wd.s:wd.e]
		for _, f := range cmd.flags {
			vs, ve := -1, -1
			switch {
			case f.spaced && string(word) == f.name && k+1 < len(words):
				vs, ve = words[k+1].s, words[k+1].e
			case f.glued && len(word) > len(f.name) && string(word[:len(f.name)]) == f.name && !(len(f.name) == 2 && word[2] == '-'):
				vs, ve = wd.s+len(f.name), wd.e
			case len(f.name) > 2 && len(word) > len(f.name)+1 && string(word[:len(f.name)+1]) == f.name+"=":
				vs, ve = wd.s+len(f.name)+1, wd.e
			}
			if vs < 0 {
				continue
			}
			if vs < ve && w[vs] == '\'' || vs < ve && w[vs] == '"' {
				vs++ // a glued quote: -p'VALUE'
				if ve > vs && w[ve-1] == w[vs-1] {
					ve--
				}
			}
			if f.userSep != 0 {
				c := bytes.IndexByte(w[vs:ve], f.userSep)
				if c < 0 {
					break // no password: curl asks for it
				}
				vs += c + 1
			}
			if bytes.HasPrefix(w[vs:ve], []byte("pass:")) {
				vs += len("pass:") // openssl -passin pass:VALUE
			}
			vs, ve = cliSpan(w, vs, ve)
			if cliValue(w[vs:ve]) {
				sink.Add(vs, ve, d.kind, match.Extender{})
			}
			break
		}
	}
	return false, 0
}

// shellWord is a word of a command line: its content's offsets (quotes
// excluded) and whether it separates commands (| ; && ||).
type shellWord struct {
	s, e int
	sep  bool
}

// shellWords splits line, a command line that starts at offset base of the
// window, into words the way a shell does closely enough: blanks and a
// backslash that continues the line separate (see cmdLineEnd), quotes group (a word that starts with a quote runs to the matching one),
// and | ; & end a command.
func shellWords(line []byte, base int) []shellWord {
	var out []shellWord
	i := 0
	for i < len(line) {
		for i < len(line) && cmdBlank(line, i) {
			i++
		}
		if i == len(line) {
			break
		}
		switch c := line[i]; c {
		case '|', ';', '&':
			j := i
			for j < len(line) && (line[j] == '|' || line[j] == ';' || line[j] == '&') {
				j++
			}
			out = append(out, shellWord{s: base + i, e: base + j, sep: true})
			i = j
			continue
		case '"', '\'':
			j := bytes.IndexByte(line[i+1:], c)
			if j < 0 {
				j = len(line) - i - 1
			}
			out = append(out, shellWord{s: base + i + 1, e: base + i + 1 + j})
			i += j + 2
			continue
		}
		j := i
		for j < len(line) && !cmdBlank(line, j) && line[j] != ';' && line[j] != '|' {
			if q := line[j]; q == '"' || q == '\'' {
				// A quoted part of an option: -p"two words", --user='a:b c'.
				// Any other quote, or one never closed, ends the word: it
				// closes the string the command line is in ({"cmd":"mysql
				// -pVALUE"}).
				k := bytes.IndexByte(line[j+1:], q)
				if k < 0 || line[i] != '-' {
					break
				}
				j += k + 1
			}
			j++
		}
		out = append(out, shellWord{s: base + i, e: base + j})
		i = j
	}
	return out
}

// netrcDet finds the password of a .netrc entry: "machine HOST login USER
// password VALUE" on one line or several, in any order of its keys.
type netrcDet struct{ kind int32 }

const netrcMax = 512

func (d *netrcDet) Window(kw int) int { return kw + netrcMax + 1 }

var netrcKeys = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"login": true, "password": true, "account": true, "port": true}
})

func (d *netrcDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	if len(pre) > 0 && setName[pre[len(pre)-1]] {
		return false, 0
	}
	i := kw
	tok := func() (int, int, bool) {
		for i < len(w) && (setBlank[w[i]] || w[i] == '\n' || w[i] == '\r') {
			i++
		}
		s := i
		for i < len(w) && !setBlank[w[i]] && w[i] != '\n' && w[i] != '\r' {
			i++
		}
		return s, i, i < len(w) || final
	}
	if kw == len(w) {
		return scan.Wait(final, kw)
	}
	if !setBlank[w[kw]] {
		return false, 0
	}
	if s, e, ok := tok(); !ok {
		return scan.Wait(final, s)
	} else if e == s {
		return false, 0 // machine with no host
	}
	for {
		s, e, ok := tok()
		if !ok {
			return scan.Wait(final, s)
		}
		key := string(w[s:e])
		if !netrcKeys()[key] {
			return false, 0 // not (or no longer) a .netrc entry: "machine learning"
		}
		vs, ve, ok := tok()
		if !ok {
			return scan.Wait(final, vs)
		}
		if ve == vs {
			return false, 0
		}
		if key == "password" {
			// Judged as a password in a file (see literalSecret): the
			// examples of documentation and tests (password pass) stay.
			if literalSecret(w[vs:ve], false, false, true, 1, nil) {
				sink.Add(vs, ve, d.kind, match.Extender{})
			}
			return false, 0
		}
	}
}

// cookieDet finds the values of a Cookie or Set-Cookie header (or a
// "cookie" field): every name=value pair whose value is a literal secret
// (see literalSecret), its attributes (Path, Expires...) left alone.
type cookieDet struct{ kind int32 }

const cookieMax = 2048

func (d *cookieDet) Window(kw int) int {
	return kw + scan.LexMax + assignBlankMax + 2 + scan.LexMax + cookieMax + 1
}

var cookieAttrs = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"path": true, "domain": true, "expires": true, "max-age": true, "samesite": true, "secure": true,
		"httponly": true, "priority": true, "partitioned": true, "version": true, "comment": true,
	}
})

func (d *cookieDet) Eval(w, pre []byte, kw int, final bool, sink match.SpanSink) (bool, int) {
	if len(pre) > 0 && (setAlnum[pre[len(pre)-1]] || pre[len(pre)-1] == '_') {
		return false, 0
	}
	if kw < len(w) && (w[kw] == 's' || w[kw] == 'S') {
		kw++ // "cookies": a field of several
	}
	st, i := keySeparator(w, kw)
	switch st {
	case scan.More:
		return scan.Wait(final, i)
	case scan.No:
		return false, 0
	}
	i = scan.Skip(w, i, setBlank, assignBlankMax)
	vq, st := scan.QuoteAt(w, i)
	if st == scan.More {
		return scan.Wait(final, i)
	}
	i += vq.N
	from := i
	e := i
	for e < len(w) && w[e] != '\n' && w[e] != '\r' && e-i < cookieMax && !(vq.N > 0 && w[e] == vq.Q) {
		e++
	}
	if e == len(w) && !final {
		return true, from
	}
	for k := i; k < e; {
		for k < e && (setBlank[w[k]] || w[k] == ';' || w[k] == ',') {
			k++
		}
		ns := k
		for k < e && w[k] != '=' && w[k] != ';' && !setBlank[w[k]] {
			k++
		}
		name := w[ns:k]
		if k == e || w[k] != '=' {
			continue
		}
		k++
		if k < e && w[k] == '"' {
			k++
		}
		vs := k
		for k < e && w[k] != ';' && w[k] != '"' && !setBlank[w[k]] && w[k] != '\\' {
			k++
		}
		if cookieAttrs()[string(bytes.ToLower(name))] || len(name) == 0 {
			continue
		}
		if literalSecret(w[vs:k], false, false, false, 8, nil) {
			sink.Add(vs, k, d.kind, match.Extender{})
		}
	}
	return false, 0
}

func (d *cliDet) AfterKeyword() bool    { return true }
func (d *netrcDet) AfterKeyword() bool  { return true }
func (d *cookieDet) AfterKeyword() bool { return true }
