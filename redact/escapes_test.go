package redact

import (
	"fmt"
	"strings"
	"testing"
)

// Issue 27, "Escapings left" and "Colour between key and value": the forms
// other encoders give an environment secret (encodeURIComponent, hex, the
// JSON escapings of Python, PHP and Gson, each also escaped twice), and
// display escapes (SGR colours, grep's highlighting) between a key and its
// value, around the value and inside it. Every value is invented.

// escForm is one encoder's spelling of a value.
type escForm struct {
	encoder string
	text    string
}

// escFormCases were printed by Python (json.dumps, urllib.parse.quote with
// encodeURIComponent's safe set, bytes.hex) and by hand after PHP's
// json_encode and Gson's rules, not by the code under test.
var escFormCases = []struct {
	value string
	forms []escForm
}{
	{"my pass@word!1<>&", []escForm{
		{"encodeURIComponent", `my%20pass%40word!1%3C%3E%26`},
		{"hex", `6d79207061737340776f726421313c3e26`},
		{"HEX", `6D79207061737340776F726421313C3E26`},
		{"php JSON_HEX_*", `my pass@word!1\u003C\u003E\u0026`},
		{"php JSON_HEX_* twice", `my pass@word!1\\u003C\\u003E\\u0026`},
		{"gson", `my pass@word!1\u003c\u003e\u0026`},
		{"gson twice", `my pass@word!1\\u003c\\u003e\\u0026`},
	}},
	{"p<a>ss&w0rd'q\"=/z", []escForm{
		{"encodeURIComponent", `p%3Ca%3Ess%26w0rd'q%22%3D%2Fz`},
		{"hex", `703c613e737326773072642771223d2f7a`},
		{"HEX", `703C613E737326773072642771223D2F7A`},
		{"python json.dumps", `p<a>ss&w0rd'q\"=/z`},
		{"python json.dumps twice", `p<a>ss&w0rd'q\\\"=/z`},
		{"php json_encode", `p<a>ss&w0rd'q\"=\/z`},
		{"php JSON_HEX_*", `p\u003Ca\u003Ess\u0026w0rd\u0027q\u0022=\/z`},
		{"php JSON_HEX_*|UNESCAPED_SLASHES", `p\u003Ca\u003Ess\u0026w0rd\u0027q\u0022=/z`},
		{"php JSON_HEX_* twice", `p\\u003Ca\\u003Ess\\u0026w0rd\\u0027q\\u0022=\\/z`},
		{"gson", `p\u003ca\u003ess\u0026w0rd\u0027q\"\u003d/z`},
		{"gson twice", `p\\u003ca\\u003ess\\u0026w0rd\\u0027q\\\"\\u003d/z`},
		{"go json.Marshal", `p\u003ca\u003ess\u0026w0rd'q\"=/z`},
		{"go json.Marshal twice", `p\\u003ca\\u003ess\\u0026w0rd'q\\\"=/z`},
	}},
	{"\u00dcn\u00efc\u00f8d\u00e9-p\u00e4ssw0rd/1", []escForm{
		{"encodeURIComponent", `%C3%9Cn%C3%AFc%C3%B8d%C3%A9-p%C3%A4ssw0rd%2F1`},
		{"hex", `c39c6ec3af63c3b864c3a92d70c3a47373773072642f31`},
		{"HEX", `C39C6EC3AF63C3B864C3A92D70C3A47373773072642F31`},
		{"python json.dumps", `\u00dcn\u00efc\u00f8d\u00e9-p\u00e4ssw0rd/1`},
		{"python json.dumps twice", `\\u00dcn\\u00efc\\u00f8d\\u00e9-p\\u00e4ssw0rd/1`},
		{"php json_encode", `\u00dcn\u00efc\u00f8d\u00e9-p\u00e4ssw0rd\/1`},
		{"php JSON_HEX_* twice", `\\u00dcn\\u00efc\\u00f8d\\u00e9-p\\u00e4ssw0rd\\/1`},
	}},
	{"emoji\U0001F511key<9>", []escForm{
		{"encodeURIComponent", `emoji%F0%9F%94%91key%3C9%3E`},
		{"hex", `656d6f6a69f09f94916b65793c393e`},
		{"HEX", `656D6F6A69F09F94916B65793C393E`},
		{"python json.dumps", `emoji\ud83d\udd11key<9>`},
		{"python json.dumps twice", `emoji\\ud83d\\udd11key<9>`},
		{"php JSON_HEX_*", `emoji\ud83d\udd11key\u003C9\u003E`},
		{"php JSON_HEX_* twice", `emoji\\ud83d\\udd11key\\u003C9\\u003E`},
		{"gson", `emoji🔑key\u003c9\u003e`},
		{"gson twice", `emoji🔑key\\u003c9\\u003e`},
	}},
	{"plainAlnumValue42", []escForm{
		{"hex", `706c61696e416c6e756d56616c75653432`},
		{"HEX", `706C61696E416C6E756D56616C75653432`},
	}},
	{"sl/ash&eq=ual1(x)*", []escForm{
		{"encodeURIComponent", `sl%2Fash%26eq%3Dual1(x)*`},
		{"hex", `736c2f6173682665713d75616c312878292a`},
		{"HEX", `736C2F6173682665713D75616C312878292A`},
		{"php json_encode", `sl\/ash&eq=ual1(x)*`},
		{"php JSON_HEX_*", `sl\/ash\u0026eq=ual1(x)*`},
		{"php JSON_HEX_*|UNESCAPED_SLASHES", `sl/ash\u0026eq=ual1(x)*`},
		{"php JSON_HEX_* twice", `sl\\/ash\\u0026eq=ual1(x)*`},
		{"gson", `sl/ash\u0026eq\u003dual1(x)*`},
		{"gson twice", `sl/ash\\u0026eq\\u003dual1(x)*`},
		{"go json.Marshal twice", `sl/ash\\u0026eq=ual1(x)*`},
	}},
	{"xxdWrappedSecretValue-0123456789abcdefXYZ", []escForm{
		{"xxd -p", "7878645772617070656453656372657456616c75652d3031323334353637\n383961626364656658595a"},
		{"xxd -p first line", "7878645772617070656453656372657456616c75652d3031323334353637"},
	}},
}

// TestEnvEscapedForms: every form of every value is masked whole, alone on
// a line, amid words, as a JSON string's contents and coloured, on the
// first line of the stream or a later one; nothing around it is masked.
func TestEnvEscapedForms(t *testing.T) {
	const marker = "[REDACTED:env:APP_X]"
	contexts := []string{"%s", "%s\n", "first line\n%s\n", "data: %s end\n", `{"k":"%s","n":1}` + "\n", "\x1b[32m%s\x1b[0m\n", "x=%s;y=2\n"}
	for _, c := range escFormCases {
		p := mustPolicy(t, Options{Environ: []string{"APP_X=" + c.value}, EnvNames: []string{"APP_X"}})
		for _, f := range c.forms {
			for _, ctx := range contexts {
				in := fmt.Sprintf(ctx, f.text)
				want := fmt.Sprintf(ctx, marker)
				for _, sizes := range [][]int{nil, {1}, {7}} {
					if got := string(redactChunks(t, p, []byte(in), sizes)); got != want {
						t.Errorf("%q as %s, writes of %v:\n got %q\nwant %q", c.value, f.encoder, sizes, got, want)
					}
				}
				if ref, _ := reference(p, []byte(in)); string(ref) != want {
					t.Errorf("%q as %s: reference got %q, want %q", c.value, f.encoder, ref, want)
				}
			}
		}
	}
}

// TestEnvEscapedFormsNearMisses: a form of another value, or one digit
// off, is not masked.
func TestEnvEscapedFormsNearMisses(t *testing.T) {
	p := mustPolicy(t, Options{Environ: []string{"APP_X=my pass@word!1<>&"}, EnvNames: []string{"APP_X"}})
	for _, in := range []string{
		"6d79207061737340776f726421313c3e27\n",    // hex, last byte off
		"my%20pass%40word!1%3C%3E%27\n",           // encodeURIComponent, last byte off
		`my pass@word!1\u003C\u003E\u0027` + "\n", // PHP, last byte off
		"6d7920706173734077\n",                    // hex of a prefix
		"sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n",
	} {
		if got := string(redactChunks(t, p, []byte(in), nil)); got != in {
			t.Errorf("%q: got %q, want it unchanged", in, got)
		}
	}
}

// TestEnvFormsCount: the number of forms of one value (README
// "Redaction"), so that 64 KB of values stays a few MB (TestEnvValuesBounded).
func TestEnvFormsCount(t *testing.T) {
	for _, c := range []struct {
		v   string
		max int
	}{
		{"plainAlnumValue42", 40},
		{"my pass@word!1<>&", 55},
		{strings.Repeat("p<a>ss&w0rd'q\"=/z", 8), 70},
	} {
		if n := len(variants(c.v)); n > c.max {
			t.Errorf("%d forms of %q, want at most %d", n, c.v, c.max)
		}
	}
}

// displayCase is coloured output: in, and what it must become (every
// escape outside a value kept, the value and the escapes inside it one
// marker).
type displayCase struct {
	name, in, want string
}

// displayCases hold the bytes jq -C and yq -C (jq 1.7: keys "\x1b[34;1m",
// strings "\x1b[0;32m", punctuation "\x1b[1;39m"), grep --color=always
// (GREP_COLORS' default ms=01;31 with "\x1b[K" after each colour, and
// fn=35 ln=32 se=36 for -H -n), git diff --color ("\x1b[32m+…\x1b[m") and
// --word-diff, ripgrep (match "\x1b[0m\x1b[1m\x1b[31m"), bat and ls
// (256 and 24-bit colours "\x1b[38;5;…m", "\x1b[38;2;…m"), tput sgr0
// ("\x1b(B\x1b[m") and an OSC 8 hyperlink around the value print.
var displayCases = []displayCase{
	// Between the key and its value, and around the value.
	{"jq -C", "\x1b[1;39m{\n  \x1b[0m\x1b[34;1m\"password\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[0;32m\"hunter2xyz9\"\x1b[0m\x1b[1;39m,\n",
		"\x1b[1;39m{\n  \x1b[0m\x1b[34;1m\"password\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[0;32m\"[REDACTED:password]\"\x1b[0m\x1b[1;39m,\n"},
	{"jq -C first line", "\x1b[34;1m\"password\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[0;32m\"hunter2xyz9\"\x1b[0m",
		"\x1b[34;1m\"password\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[0;32m\"[REDACTED:password]\"\x1b[0m"},
	{"jq -C nested api_key", "    \x1b[0m\x1b[34;1m\"api_key\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[0;32m\"AbCd3fGh1jKlMn0p\"\x1b[0m\x1b[1;39m\n",
		"    \x1b[0m\x1b[34;1m\"api_key\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[0;32m\"[REDACTED:api-key]\"\x1b[0m\x1b[1;39m\n"},
	{"jq -C client_secret later line", "\x1b[1;39m{\n  \x1b[0m\x1b[34;1m\"user\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[0;32m\"ci\"\x1b[0m\x1b[1;39m,\n  \x1b[0m\x1b[34;1m\"client_secret\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[0;32m\"Gq4Rz8Lm2Xw7Vt9Kp3Nb\"\x1b[0m\x1b[1;39m\n\x1b[1;39m}\x1b[0m\n",
		"\x1b[1;39m{\n  \x1b[0m\x1b[34;1m\"user\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[0;32m\"ci\"\x1b[0m\x1b[1;39m,\n  \x1b[0m\x1b[34;1m\"client_secret\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[0;32m\"[REDACTED:secret]\"\x1b[0m\x1b[1;39m\n\x1b[1;39m}\x1b[0m\n"},
	{"yq -C yaml", "\x1b[36mdb_password\x1b[0m: \x1b[32mXk9mP2vL8qR4tW7z\x1b[0m\n",
		"\x1b[36mdb_password\x1b[0m: \x1b[32m[REDACTED:password]\x1b[0m\n"},
	{"grep value", "password=\x1b[01;31m\x1b[KS3cr3tPw9\x1b[m\x1b[K\n",
		"password=\x1b[01;31m\x1b[K[REDACTED:password]\x1b[m\x1b[K\n"},
	{"grep key", "\x1b[01;31m\x1b[Kpassword\x1b[m\x1b[K=S3cr3tPw9\n",
		"\x1b[01;31m\x1b[Kpassword\x1b[m\x1b[K=[REDACTED:password]\n"},
	{"grep key and separator", "x \x1b[01;31m\x1b[Kpassword=\x1b[m\x1b[KS3cr3tPw9 y\n",
		"x \x1b[01;31m\x1b[Kpassword=\x1b[m\x1b[K[REDACTED:password] y\n"},
	{"grep -H -n", "\x1b[35m\x1b[Kg\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K\x1b[32m\x1b[K1\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[Kx password=\x1b[01;31m\x1b[KS3cr3tPw9\x1b[m\x1b[K\n",
		"\x1b[35m\x1b[Kg\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K\x1b[32m\x1b[K1\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[Kx password=\x1b[01;31m\x1b[K[REDACTED:password]\x1b[m\x1b[K\n"},
	{"ripgrep", "\x1b[0m\x1b[35mconfig.env\x1b[0m:\x1b[0m\x1b[32m3\x1b[0m:API_TOKEN=\x1b[0m\x1b[1m\x1b[31mQm9vTjR5ZkV3cUx4YTJi\x1b[0m\n",
		"\x1b[0m\x1b[35mconfig.env\x1b[0m:\x1b[0m\x1b[32m3\x1b[0m:API_TOKEN=\x1b[0m\x1b[1m\x1b[31m[REDACTED:token]\x1b[0m\n"},
	{"bat 256 colours", "\x1b[38;5;203msecret\x1b[0m\x1b[38;5;231m \x1b[0m\x1b[38;5;203m=\x1b[0m\x1b[38;5;231m \x1b[0m\x1b[38;5;186m\"Wm3Qz8Lr2Tx7Vk9P\"\x1b[0m\n",
		"\x1b[38;5;203msecret\x1b[0m\x1b[38;5;231m \x1b[0m\x1b[38;5;203m=\x1b[0m\x1b[38;5;231m \x1b[0m\x1b[38;5;186m\"[REDACTED:secret]\"\x1b[0m\n"},
	{"24-bit colour and tput sgr0", "token: \x1b[38;2;255;100;0mLq9zXw2Rt7Vm4Kp8Jc3N\x1b(B\x1b[m\n",
		"token: \x1b[38;2;255;100;0m[REDACTED:token]\x1b(B\x1b[m\n"},
	{"OSC 8 hyperlink", "password: \x1b]8;;https://vault.example.com/x\x1b\\Hx7kP2qLm9zRt4Wv\x1b]8;;\x1b\\\n",
		"password: \x1b]8;;https://vault.example.com/x\x1b\\[REDACTED:password]\x1b]8;;\x1b\\\n"},
	// Inside the value: grep highlighting part of it, git's word diff.
	{"grep inside value", "x password=\x1b[01;31m\x1b[KS3cr\x1b[m\x1b[K3tPw9\n",
		"x password=\x1b[01;31m\x1b[K[REDACTED:password]\n"},
	{"coloured middle", "password=Tr0ub\x1b[1mador99\x1b[0mX end\n",
		"password=[REDACTED:password] end\n"},
	{"git diff", "\x1b[32m+\x1b[m\x1b[32mpassword=S3cr3tPw9\x1b[m\n",
		"\x1b[32m+\x1b[m\x1b[32mpassword=[REDACTED:password]\x1b[m\n"},
	// Token shapes split by a colour, no key beside them.
	{"ghp split", "token ghp_\x1b[01;31m\x1b[KaBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789\x1b[m\x1b[K\n",
		"token [REDACTED:github-pat]\x1b[m\x1b[K\n"},
	{"AKIA coloured", "id \x1b[33mAKIAIOSFODNN7EXAMPLF\x1b[0m\n",
		"id \x1b[33m[REDACTED:aws-access-key-id]\x1b[0m\n"},
	{"AKIA split", "\x1b[1mAKIA\x1b[0mIOSFODNN7EXAMPLF\n",
		"\x1b[1m[REDACTED:aws-access-key-id]\n"},
	{"stripe split by grep", "key: sk_live_4eC39Hq\x1b[01;31m\x1b[KLyjWDarjtT1zdp7dc\x1b[m\x1b[K\n",
		"key: [REDACTED:stripe-live-secret-key]\x1b[m\x1b[K\n"},
	{"slack split at a dash", "\x1b[32mxoxb-1234567890-\x1b[1m1234567890123-AbCdEfGhIjKlMnOpQrStUvWx\x1b[0m later\n",
		"\x1b[32m[REDACTED:slack-bot-token]\x1b[0m later\n"},
}

// displayNearMisses are coloured text with no secret: left as they are.
var displayNearMisses = []string{
	"\x1b[01;34mpassword-reset\x1b[0m  \x1b[01;32mtoken_test.go\x1b[0m\n",
	"\x1b[1mPassword:\x1b[0m \n",
	"\x1b[31m-\tpassword := os.Getenv(\"DB_PASSWORD\")\x1b[m\n",
	"\x1b[32mok\x1b[0m  \tgithub.com/example/token\t0.2s\n",
	"\x1b[34;1m\"password_min_length\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[0;39m12\x1b[0m\n",
	"\x1b[34;1m\"token\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[1;30mnull\x1b[0m\n",
	"\x1b[35m\x1b[Kauth.go\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K\tif \x1b[01;31m\x1b[Ktoken\x1b[m\x1b[K == \"\" {\n",
	"\x1b[2K\r\x1b[32mDownloading\x1b[0m token-parser v1.2.3\n",
}

// TestDisplayEscapes: redaction sees through display escapes; each case
// alone, after a line of text, and split everywhere the chunkings split
// it, agrees with the whole-buffer reference.
func TestDisplayEscapes(t *testing.T) {
	p := mustPolicy(t, Options{})
	for _, c := range displayCases {
		for _, pre := range []string{"", "start\n"} {
			in, want := pre+c.in, pre+c.want
			for _, sizes := range [][]int{nil, {1}, {2}, {5}, {3, 1}} {
				if got := string(redactChunks(t, p, []byte(in), sizes)); got != want {
					t.Errorf("%s, writes of %v:\n got %q\nwant %q", c.name, sizes, got, want)
				}
			}
			if ref, _ := reference(p, []byte(in)); string(ref) != want {
				t.Errorf("%s: reference got %q", c.name, ref)
			}
		}
	}
	for _, in := range displayNearMisses {
		for _, sizes := range [][]int{nil, {1}} {
			if got := string(redactChunks(t, p, []byte(in), sizes)); got != in {
				t.Errorf("near miss, writes of %v: got %q, want it unchanged", sizes, got)
			}
		}
	}
}

// TestDisplayRemembered: a value coloured inside is remembered as a
// terminal shows it, and its later plain occurrence is masked.
func TestDisplayRemembered(t *testing.T) {
	p := mustPolicy(t, Options{})
	in := "password=\x1b[01;31m\x1b[KHx7kP2q\x1b[m\x1b[KLm9zRt4Wv\nlogin Hx7kP2qLm9zRt4Wv failed\n"
	want := "password=\x1b[01;31m\x1b[K[REDACTED:password]\nlogin [REDACTED:password] failed\n"
	for _, sizes := range [][]int{nil, {1}, {7}} {
		if got := string(redactChunks(t, p, []byte(in), sizes)); got != want {
			t.Errorf("writes of %v:\n got %q\nwant %q", sizes, got, want)
		}
	}
	if ref, _ := reference(p, []byte(in)); string(ref) != want {
		t.Errorf("reference got %q", ref)
	}
}
