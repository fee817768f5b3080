package redact

import "testing"

// TestFalseMasks: the breaker's false masks of issue 27 (placeholders in
// HTML entities, settings about a password, config properties, GnuPG key
// ids, markdown and Go strings from git log -p), each with the secret that
// must still be masked beside it.
func TestFalseMasks(t *testing.T) {
	p := mustPolicy(t, Options{})
	cases := []struct{ in, want string }{
		// 1. A type or placeholder in HTML entities is no value, so it is
		// not remembered either.
		{"x passphrase: &#x3C;string>\nname &#x3C;string> the name\n", "x passphrase: &#x3C;string>\nname &#x3C;string> the name\n"},
		{"x passphrase: &lt;string&gt;\n", "x passphrase: &lt;string&gt;\n"},
		{"x passphrase: &#60;string&#62;\n", "x passphrase: &#60;string&#62;\n"},
		{"x passphrase: <string>\n", "x passphrase: <string>\n"},
		{"x passphrase: &lt;your-passphrase&gt;\n", "x passphrase: &lt;your-passphrase&gt;\n"},
		// 2. A setting about a password, and an algorithm or boolean value.
		{"#password_encryption = scram-sha-256 # or md5\nMETHOD can be \"scram-sha-256\"\n", "#password_encryption = scram-sha-256 # or md5\nMETHOD can be \"scram-sha-256\"\n"},
		{"jmxremote.password.toHashes = true|false\n", "jmxremote.password.toHashes = true|false\n"},
		{"password_hash = bcrypt\n", "password_hash = bcrypt\n"},
		{"password_method: md5\n", "password_method: md5\n"},
		{"password: sha512\n", "password: sha512\n"},
		{"password=true|false\n", "password=true|false\n"},
		{"password=Hx7kP2qLm9zRt4Wv\n", "password=[REDACTED:password]\n"},
		{"password: md5Hx7kP2qLm9\n", "password: [REDACTED:password]\n"},
		// 3. A dotted property about configuration.
		{"-Djava.security.auth.login.config=somefile.\n", "-Djava.security.auth.login.config=somefile.\n"},
		// 4. A GnuPG key id is public; a closing bracket the value did not
		// open is never swallowed.
		{"+ Add file (GnuPG key: 0x7EC2DBB6F4DBF434).\n", "+ Add file (GnuPG key: 0x7EC2DBB6F4DBF434).\n"},
		{"(signing key: Zq8v3LmN0pXr7TsW2yBd9KcF).\n", "(signing key: [REDACTED:key]).\n"},
		// 5. Markdown and Go strings from git log -p.
		{`	"args:\n  - --password\n  - --stdin2\n"` + "\n", `	"args:\n  - --password\n  - --stdin2\n"` + "\n"},
		{"Digest's `response` is a hash\n", "Digest's `response` is a hash\n"},
		{`run("vault login \"$VAULT_TOKEN2\"")` + "\n", `run("vault login \"$VAULT_TOKEN2\"")` + "\n"},
		{"use `curl -u user:Wq9zLr3TnX7vKm2P`, then\n", "use `curl -u user:[REDACTED:cli-password]`, then\n"},
		{"Authorization: Digest username=\"u\", response=\"6629fae49393a05397450978507c4ef1\"\n", "Authorization: Digest username=\"u\", response=\"[REDACTED:authorization]\"\n"},
		// 6. CDATA: the value only.
		{"<password><![CDATA[Vq3xT9mLw2Pz8Kd4]]></password>\n", "<password><![CDATA[[REDACTED:password]]]></password>\n"},
	}
	for _, c := range cases {
		if got := checkAllWays(t, p, c.in, ""); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestFalseMaskNames: names about how a password is kept, and dotted
// configuration properties, are no keys; the keys beside them still are.
func TestFalseMaskNames(t *testing.T) {
	p := mustPolicy(t, Options{})
	cases := []struct{ in, want string }{
		{"password_encryption = Zq8v3LmN0pXr\n", "password_encryption = Zq8v3LmN0pXr\n"},
		{"jmxremote.password.toHashes = Zq8v3LmN0pXr\n", "jmxremote.password.toHashes = Zq8v3LmN0pXr\n"},
		{"-Dcom.example.auth.config=/etc/x.conf -Dsecret.conf=a\n", "-Dcom.example.auth.config=/etc/x.conf -Dsecret.conf=a\n"},
		{"DOCKER_AUTH_CONFIG=Zq8v3LmN0pXr7TsW2yBd9KcF\n", "DOCKER_AUTH_CONFIG=[REDACTED:auth]\n"},
		{"-Djavax.net.ssl.keyStorePassword=Zq8v3LmN0pXr\n", "-Djavax.net.ssl.keyStorePassword=[REDACTED:password]\n"},
		{"db.password=Zq8v3LmN0pXr\n", "db.password=[REDACTED:password]\n"},
	}
	for _, c := range cases {
		if got := checkAllWays(t, p, c.in, ""); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestFalseMaskCommandLines: command lines quoted in Go strings and markdown
// (git log -p of tests and docs): escaped quotes and line ends, code spans.
func TestFalseMaskCommandLines(t *testing.T) {
	p := mustPolicy(t, Options{})
	cases := []struct{ in, want string }{
		{`	"usage: sqlcmd -U login_id -P password\n",` + "\n" + `	"args:\n  - --password\n  - --stdin2\n",` + "\n", `	"usage: sqlcmd -U login_id -P password\n",` + "\n" + `	"args:\n  - --password\n  - --stdin2\n",` + "\n"},
		{`	"mysql -p\"$PW2\" db\n",` + "\n", `	"mysql -p\"$PW2\" db\n",` + "\n"},
		{`	"htpasswd -b \"$FILE\" \"$USER\" \"$PASS2\"\n",` + "\n", `	"htpasswd -b \"$FILE\" \"$USER\" \"$PASS2\"\n",` + "\n"},
		{`	"vault login \"s.Zq8v3LmN0pXr7TsW\"\n",` + "\n", `	"vault login \"[REDACTED:cli-password]\"\n",` + "\n"},
		{`	"sqlcmd -U sa -P Zq8v3LmN0pXr\n",` + "\n", `	"sqlcmd -U sa -P [REDACTED:cli-password]\n",` + "\n"},
		{"`sshpass -p Hq2Lz9Wx7Vr3Kt`, `mysql -pTq7zWm2xLp9R`.\n", "`sshpass -p [REDACTED:cli-password]`, `mysql -p[REDACTED:cli-password]`.\n"},
		{"smbclient -U DOMAIN\\nick%Rk8Vq2Lz7W //s/x\n", "smbclient -U DOMAIN\\nick%[REDACTED:cli-password] //s/x\n"},
		{"mysql -pab`cd`1x db\n", "mysql -p[REDACTED:cli-password] db\n"},
	}
	for _, c := range cases {
		if got := checkAllWays(t, p, c.in, ""); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestCDATA: an element's text in a CDATA section is the value; the section's
// brackets and the tags stay.
func TestCDATA(t *testing.T) {
	p := mustPolicy(t, Options{})
	cases := []struct{ in, want string }{
		{"<password><![CDATA[Hx7kP2qLm9]]></password>\n", "<password><![CDATA[[REDACTED:password]]]></password>\n"},
		{"  <db.Password><![CDATA[p@ss<w]rd>]]></db.Password>\n", "  <db.Password><![CDATA[[REDACTED:password]]]></db.Password>\n"},
		{"<apiToken><![CDATA[Zq8v3LmN0pXr7TsW2yBd]]></apiToken> next\n", "<apiToken><![CDATA[[REDACTED:token]]]></apiToken> next\n"},
		{"<password><![CDATA[${DB_PASS}]]></password>\n", "<password><![CDATA[${DB_PASS}]]></password>\n"},
		{"<password><![CDATA[Hx7kP2qLm9]]></other>\n", "<password><![CDATA[Hx7kP2qLm9]]></other>\n"},
	}
	for _, c := range cases {
		if got := checkAllWays(t, p, c.in, ""); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
