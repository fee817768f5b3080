package redact

import (
	"strings"
	"testing"
)

// Value extents (issue 27, values.go): a value is masked whole, whatever
// symbols it holds, and ends where its carrier says; code, hosts and the
// words around a value stay. Every value is invented.

type valueCase struct {
	in, want string
}

// checkValueCases runs each case every way (checkAllWays: one write,
// one-byte writes, any split, across a 64 KiB boundary, against the
// whole-buffer reference) and compares the output byte for byte.
func checkValueCases(t *testing.T, cases []valueCase) {
	t.Helper()
	p := mustPolicy(t, Options{})
	for _, c := range cases {
		if got := checkAllWays(t, p, c.in, ""); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestValueWholeToken: in key=value lines, env dumps, flags and YAML the
// value runs to the end of its token (a blank, a quote, the line's end),
// whatever symbols it holds: no fragment after a "&", "(", ")", "%", "=",
// "?" or "," is shown.
func TestValueWholeToken(t *testing.T) {
	checkValueCases(t, []valueCase{
		{"password=Tr0ub4dor&3\n", "password=[REDACTED:password]\n"},
		{"DB_PASSWORD=p@ss!w0rd%^&*()\n", "DB_PASSWORD=[REDACTED:password]\n"},
		{"password=~x(y)z*1+2=3?4,5.6:7\n", "password=[REDACTED:password]\n"},
		{"password=abc(def)ghi1\n", "password=[REDACTED:password]\n"},
		{"password=ab)cd1\n", "password=[REDACTED:password]\n"},
		{"password=ab]cd}e1 next\n", "password=[REDACTED:password] next\n"},
		// Later lines, mid-line, after a colour code, in a logfmt line.
		{"build ok\nsecret_key=aB3&dE5!gH7(jK)9 done\n", "build ok\nsecret_key=[REDACTED:secret] done\n"},
		{"level=info msg=login password=Hq(7)&z!9 user=bob\n", "level=info msg=login password=[REDACTED:password] user=bob\n"},
		{"\x1b[32mpassword=Tr0ub4dor&3\x1b[0m\n", "\x1b[32mpassword=[REDACTED:password]\x1b[0m\n"},
		{"export MYSQL_PWD=Qz&8v!(x)y%2 && ./deploy.sh\n", "export MYSQL_PWD=[REDACTED:password] && ./deploy.sh\n"},
		{"mysqldump --password=p@ss&w0rd!x app\n", "mysqldump --password=[REDACTED:password] app\n"},
		{"db:\n  password: p@ss&w0rd)x1\n", "db:\n  password: [REDACTED:password]\n"},
		{"env: DB_PASSWORD=Xy7&(a)b=c?d\n", "env: DB_PASSWORD=[REDACTED:password]\n"},
		{"password=s3cr3t<>x9 ok\n", "password=[REDACTED:password] ok\n"},
		// A quote inside the token is part of the value when a letter or
		// digit follows it; else it closes the string the line was in.
		{"PASSWORD=ab\"cd1 ok\n", "PASSWORD=[REDACTED:password] ok\n"},
		{"DB_PASSWORD=p'ss!w0rd9 x\n", "DB_PASSWORD=[REDACTED:password] x\n"},
		{"echo \"password=Hq7&x9!a\"\n", "echo \"password=[REDACTED:password]\"\n"},
		{"x='token=Zq8v3LmN0pXr7TsW'\n", "x='token=[REDACTED:token]'\n"},
		{`{"cmd":"login password=Hq7&x9!a","ok":true}` + "\n", `{"cmd":"login password=[REDACTED:password]","ok":true}` + "\n"},
	})
}

// TestValueCarrierEnds: "&" ends a value in a URL query or form body, ";"
// and "," before the next key, a closing bracket the value did not open,
// a tag: the words after it stay.
func TestValueCarrierEnds(t *testing.T) {
	checkValueCases(t, []valueCase{
		{"GET https://api.example.com/v1?a=1&token=Zq8v3LmN0pXr7TsW&b=2\n", "GET https://api.example.com/v1?a=1&token=[REDACTED:token]&b=2\n"},
		{"GET /cb?token=Zq8v3LmN0pXr7TsW&next=/home HTTP/1.1\n", "GET /cb?token=[REDACTED:token]&next=/home HTTP/1.1\n"},
		{`<a href="/x?a=1&amp;token=Zq8v3LmN0pXr7TsW&amp;b=2">` + "\n", `<a href="/x?a=1&amp;token=[REDACTED:token]&amp;b=2">` + "\n"},
		{"curl -d user=bob&password=Hq7x9!a&grant_type=password https://h/t\n", "curl -d user=bob&password=[REDACTED:password]&grant_type=password https://h/t\n"},
		{"redirect=%2Fcb%3Ftoken%3DZq8v3LmN0pXr7TsW%26b%3D2\n", "redirect=%2Fcb%3Ftoken%3D[REDACTED:token]%26b%3D2\n"},
		{"Server=db;Password=Hq7&x!9;Database=app\n", "Server=db;Password=[REDACTED:password];Database=app\n"},
		{"Set-Cookie: session=Zq8v3LmN0pXr7TsW2y; Path=/\n", "Set-Cookie: session=[REDACTED:cookie]; Path=/\n"},
		{"password=Hq7&x!9, user=bob\n", "password=[REDACTED:password], user=bob\n"},
		{"password=Hq7&x!9,user=bob\n", "password=[REDACTED:password],user=bob\n"},
		{"User(name=bob, password=Hq7(x)9)\n", "User(name=bob, password=[REDACTED:password])\n"},
		{"map[password:[Kx7Lq2Wz9Rt4Vm] user:[ci]]\n", "map[password:[[REDACTED:password]] user:[ci]]\n"},
		{"<input password=Hq7x9!a/>\n", "<input password=[REDACTED:password]/>\n"},
		{"<arg>--password=Hq7&x9!a</arg>\n", "<arg>--password=[REDACTED:password]</arg>\n"},
	})
}

// TestValueCodeStays: a call is code only when nothing but more of it
// follows its ")"; a short number literal is code; words with an
// apostrophe after "key: " are prose. These stay exactly.
func TestValueCodeStays(t *testing.T) {
	var cases []valueCase
	for _, l := range []string{
		"token = parser.next()",
		"password=get_pass()",
		"token=f(x)",
		"token=f(x); x++",
		"token=f(x), err",
		"api_key=config.get_key(env, 'x')",
		"password=getpass.getpass().strip()",
		"token=tokens[0]",
		"token=Token{Kind: 1}",
		"var tokenString = map[rune]string{",
		"secret := []byte(\"x\")",
		"password=self.password",
		"secret = 0x53c2",
		"key: 0xFF",
		"signing_key = 0o755",
		"secret = 0xdeadbeefcafebabe",
		"api_key = 0x7fff_ffff",
		"def login(user, password=None):",
		"token = SecretsManagerClientBuilder",
		// Prose with an apostrophe, which a bare value may now hold.
		"  * passwd.master: backup's home directory is /var/backups.",
		"secret: don't print it",
	} {
		cases = append(cases, valueCase{l + "\n", l + "\n"})
	}
	checkValueCases(t, cases)
}

// TestValueRandomHex: a random-looking value after a secret key is masked
// even when it is hex with few letters or starts with 0x, 0o, 0b; and a
// long base64 value with words in it (the AWS documentation's example key).
func TestValueRandomHex(t *testing.T) {
	checkValueCases(t, []valueCase{
		{"api_key=0x9f8e7d6c5b4a39281726354\n", "api_key=[REDACTED:api-key]\n"},
		{"secret: 0x3928172635491827a3c4\n", "secret: [REDACTED:secret]\n"},
		{"token=3928172635491827a3\n", "token=[REDACTED:token]\n"},
		{`{"api_key": "0x1234567890123456789a"}` + "\n", `{"api_key": "[REDACTED:api-key]"}` + "\n"},
		{"private_key = 0xb5c9d2e4f1a3b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2\n", "private_key = [REDACTED:key]\n"},
		{"token=0oK3xLq9Wz2Rt7Vm\n", "token=[REDACTED:token]\n"},
		{"api_key: 0bZ8qLm2Xw7Vt9Kp3N\n", "api_key: [REDACTED:api-key]\n"},
		{"secret=0xQz8Lm2Xw7Vt9Kp3N\n", "secret=[REDACTED:secret]\n"},
		{"SIGNING_KEY=0x8A7B6C5D4E3F2A1B0C9D8E7F\n", "SIGNING_KEY=[REDACTED:key]\n"},
		{"api_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY tail\n", "api_key=[REDACTED:api-key] tail\n"},
		{"secret_key: je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY\n", "secret_key: [REDACTED:secret]\n"},
		{`"client_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",` + "\n", `"client_secret": "[REDACTED:secret]",` + "\n"},
	})
}

// TestValueXML: an element's text longer than 256 bytes is masked, and a
// Jenkins encrypted secret ({base64}) in a secret-named element or key;
// templates in braces and other elements stay.
func TestValueXML(t *testing.T) {
	long := strings.Repeat("Zq8v3LmN0pXr7TsW", 20) // 320 bytes
	longer := strings.Repeat("aB3dE5gH7j", 300)    // 3,000 bytes
	const jenkins = "{AQAAABAAAAAQabcdefghijklmnopqrstuv0123456789ABCDEF=}"
	const jenkins2 = "{AQAAABAAAAAwQ8x1Vn9Lk2Pz4Rt7Ws0Yb3Hc6Jd5Mf8Ng1Kq4Tx7Zr0Ea3Uv6Io9Py2Ls5=}"
	checkValueCases(t, []valueCase{
		{"<password>" + long + "</password>\n", "<password>[REDACTED:password]</password>\n"},
		{"<settings>\n  <apiToken>" + longer + "</apiToken>\n</settings>\n", "<settings>\n  <apiToken>[REDACTED:token]</apiToken>\n</settings>\n"},
		{"<description>" + long + "</description>\n", "<description>" + long + "</description>\n"},
		{"<secret>" + jenkins + "</secret>\n", "<secret>[REDACTED:secret]</secret>\n"},
		{"  <password>" + jenkins2 + "</password>\n", "  <password>[REDACTED:password]</password>\n"},
		{"<privateKeySource><privateKey>" + jenkins2 + "</privateKey></privateKeySource>\n", "<privateKeySource><privateKey>[REDACTED:key]</privateKey></privateKeySource>\n"},
		{"<passphrase>" + jenkins + "</passphrase>\n", "<passphrase>[REDACTED:password]</passphrase>\n"},
		{"<hudson.util.Secret><apiToken>" + jenkins2 + "</apiToken>\n", "<hudson.util.Secret><apiToken>[REDACTED:token]</apiToken>\n"},
		{"          password: \"" + jenkins + "\"\n", "          password: \"[REDACTED:password]\"\n"},
		{"secret: " + jenkins2 + "\n", "secret: [REDACTED:secret]\n"},
		// Templates in braces stay.
		{"<password>{password}</password>\n", "<password>{password}</password>\n"},
		{"<secret>{{ vault_secret }}</secret>\n", "<secret>{{ vault_secret }}</secret>\n"},
		{"<token>{0}</token>\n", "<token>{0}</token>\n"},
		{"<secret>{abcdefghijklmnopqrstuvwxyz}</secret>\n", "<secret>{abcdefghijklmnopqrstuvwxyz}</secret>\n"},
	})
}

// TestValueLeadingEquals: in "password: =V" the value is V; the "=" stays
// and is not remembered with it, so a later "x=V" keeps its "=".
func TestValueLeadingEquals(t *testing.T) {
	checkValueCases(t, []valueCase{
		{"password: =Vq8Lz2Wx7Rt4\nx=Vq8Lz2Wx7Rt4\n", "password: =[REDACTED:password]\nx=[REDACTED:password]\n"},
		{"secret: =Zq8v3LmN0pXr7TsW\nDB=Zq8v3LmN0pXr7TsW ok\n", "secret: =[REDACTED:secret]\nDB=[REDACTED:secret] ok\n"},
		{`{"password": "=Vq8Lz2Wx7Rt4"}` + "\nlogin=Vq8Lz2Wx7Rt4\n", `{"password": "=[REDACTED:password]"}` + "\nlogin=[REDACTED:password]\n"},
		{"token: =Zq8v3LmN0pXr7TsW\n--opt=Zq8v3LmN0pXr7TsW\n", "token: =[REDACTED:token]\n--opt=[REDACTED:token]\n"},
		{"password: =p@ss&w0rd!\nuse=p@ss&w0rd! now\n", "password: =[REDACTED:password]\nuse=[REDACTED:password] now\n"},
	})
}

// TestValueLong: a value longer than 256 bytes is masked as it arrives, to
// the end of its token, or in a URL query to the next "&".
func TestValueLong(t *testing.T) {
	long := strings.Repeat("Zq8v3LmN0pXr7TsW", 20) // 320 bytes
	checkValueCases(t, []valueCase{
		{"GET /cb?token=" + long + "&next=/home HTTP/1.1\n", "GET /cb?token=[REDACTED:token]&next=/home HTTP/1.1\n"},
		{"password=" + long + "&x done\n", "password=[REDACTED:password] done\n"},
	})
}
