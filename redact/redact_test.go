package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/capwrap/capwrap/redact/internal/testlog"
)

func mustPolicy(t testing.TB, opt Options) *Policy {
	t.Helper()
	p, err := NewPolicy(opt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// redactChunks runs in through a Writer of p, written in pieces of the given
// sizes (cycled; nil means one write).
func redactChunks(t testing.TB, p *Policy, in []byte, sizes []int) []byte {
	t.Helper()
	var out bytes.Buffer
	w := p.NewWriter(&out)
	for i, k := 0, 0; i < len(in); k++ {
		n := len(in) - i
		if len(sizes) > 0 {
			n = min(n, sizes[k%len(sizes)])
		}
		if m, err := w.Write(in[i : i+n]); err != nil || m != n {
			t.Fatalf("Write = %d, %v; want %d, nil", m, err, n)
		}
		i += n
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// filler returns n bytes of harmless 100-byte lines ending in a newline.
func filler(n int) []byte {
	line := strings.Repeat("y", 99) + "\n"
	b := []byte(strings.Repeat(line, n/len(line)+1))[:n]
	if n > 0 {
		b[n-1] = '\n'
	}
	return b
}

// checkAllWays runs in as one write, as one-byte writes and with secret (a
// substring of in) straddling a 64 KiB write boundary, checks that every way
// gives the same output, and returns the one-write output.
func checkAllWays(t *testing.T, p *Policy, in, secret string) string {
	t.Helper()
	whole := redactChunks(t, p, []byte(in), nil)
	if bytewise := redactChunks(t, p, []byte(in), []int{1}); !bytes.Equal(bytewise, whole) {
		t.Errorf("one-byte writes differ:\n got %q\nwant %q", bytewise, whole)
	}
	if ref, _ := reference(p, []byte(in)); !bytes.Equal(ref, whole) {
		t.Errorf("reference differs:\n got %q\nwant %q", whole, ref)
	}
	// Two writes split anywhere: a detector that decided on a window cut
	// inside a lexeme (half of a \u0022) shows up here, where one-byte
	// writes, evaluated only as the window doubles, may step over it.
	for n := 1; n < len(in) && len(in) <= 512; n++ {
		if got := redactChunks(t, p, []byte(in), []int{n, len(in)}); !bytes.Equal(got, whole) {
			t.Errorf("split after %d bytes: got %q, want %q", n, got, whole)
			break
		}
	}
	idx := strings.Index(in, secret)
	if idx < 0 {
		idx = 0
	}
	pad := filler(64<<10 - idx - len(secret)/2)
	long := append(append([]byte{}, pad...), in...)
	want := append(append([]byte{}, pad...), whole...)
	for _, sizes := range [][]int{{64 << 10}, {64<<10 - 1, 1}, {4096}} {
		if got := redactChunks(t, p, long, sizes); !bytes.Equal(got, want) {
			t.Errorf("straddling a boundary with writes of %v: got ...%q, want ...%q", sizes, tail(got), tail(want))
		}
	}
	return string(whole)
}

func tail(b []byte) []byte { return b[max(0, len(b)-200):] }

type catCase struct {
	kind   string
	in     string // contains secret
	secret string
	miss   []string // near misses: unchanged
}

func catalogueCases() []catCase {
	alnum36 := "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	b64u := func(n int) string {
		const a = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-"
		var s []byte
		for i := 0; i < n; i++ {
			s = append(s, a[i%len(a)])
		}
		return string(s)
	}
	alnum := func(n int) string { return strings.Repeat(alnum36, n/36+1)[:n] }
	hex := func(n int) string { return strings.Repeat("0123456789abcdef", n/16+1)[:n] }
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkZha2UifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAfakefakefakefakefakefakefakefakefakefakefake\nZmFrZWtleWZha2VrZXlmYWtla2V5\n-----END RSA PRIVATE KEY-----"
	return append([]catCase{
		{"aws-access-key-id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n", "AKIAIOSFODNN7EXAMPLE",
			[]string{"id AKIAIOSFODNN7EXAMP end", "AKIAIOSFODNN7EXAMPLE0 longer", "XAKIAIOSFODNN7EXAMPLE", "akiaiosfodnn7example"}},
		{"aws-access-key-id", "key=ASIAY34FZKBOKMUTVV7A;", "ASIAY34FZKBOKMUTVV7A", nil},
		{"aws-secret-access-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
			[]string{"aws_secret_access_key = <your-secret-key>\n", "AWS_SECRET_ACCESS_KEY=\n"}},
		{"github-pat", "token: ghp_" + alnum36 + " ok", "ghp_" + alnum36,
			[]string{"ghp_short123 ", "see ghp_" + alnum36[:30] + ".", "xghp_" + alnum36}},
		{"github-oauth-token", "gho_" + alnum36, "gho_" + alnum36, []string{"gho_abc"}},
		{"github-user-token", "(ghu_" + alnum36 + ")", "ghu_" + alnum36, []string{"ghu_"}},
		{"github-app-token", "x-access-token:ghs_" + alnum36 + "@github.com", "ghs_" + alnum36, []string{"ghs_0123"}},
		{"github-refresh-token", "\"ghr_" + alnum(76) + "\"", "ghr_" + alnum(76), []string{"ghr_zzz"}},
		{"github-fine-grained-pat", "GH=github_pat_11ABCDEFG0" + alnum(12) + "_" + alnum(59), "github_pat_11ABCDEFG0" + alnum(12) + "_" + alnum(59),
			[]string{"github_pat_tooshort", "see github_pat_ docs"}},
		{"gitlab-pat", "PRIVATE-TOKEN: glpat-Ab3dEf6hIj9kLm2nOp5q\n", "glpat-Ab3dEf6hIj9kLm2nOp5q", []string{"glpat-short"}},
		{"gitlab-token", "runner glrt-Ab3dEf6hIj9kLm2nOp5q", "glrt-Ab3dEf6hIj9kLm2nOp5q", []string{"glrt-x"}},
		{"slack-bot-token", "SLACK=xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx\n", "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", []string{"xoxb-12"}},
		{"slack-user-token", "xoxp-1234567890-1234567890-1234567890123-abcdef0123456789abcdef0123456789", "xoxp-1234567890-1234567890-1234567890123-abcdef0123456789abcdef0123456789", []string{"xoxp-"}},
		{"slack-token", "xoxa-2-1234567890-abcdef", "xoxa-2-1234567890-abcdef", []string{"xoxa-2"}},
		{"slack-app-token", "xapp-1-A0123456789-1234567890123-abcdef0123", "xapp-1-A0123456789-1234567890123-abcdef0123", nil},
		{"slack-webhook", "POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX done", "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
			[]string{"https://hooks.slack.com/services/ is the endpoint", "https://api.slack.com/apps/A0123456789"}},
		{"discord-webhook", "https://discord.com/api/webhooks/123456789012345678/" + b64u(68) + "\n", "123456789012345678/" + b64u(68),
			[]string{"https://discord.com/api/webhooks/123"}},
		{"discord-bot-token", "DISCORD MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz01234567 x", "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz01234567",
			[]string{"MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.short", "NOT MTIzNDU2 ODD"}},
		{"stripe-live-secret-key", "stripe.api_key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'", "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
			[]string{"pk_test_4eC39HqLyjWDarjtT1zdp7dc", "pk_live_4eC39HqLyjWDarjtT1zdp7dc"}},
		{"stripe-restricted-key", "rk_live_4eC39HqLyjWDarjtT1zdp7dc", "rk_live_4eC39HqLyjWDarjtT1zdp7dc", []string{"rk_live_short"}},
		{"anthropic-api-key", "ANTHROPIC=sk-ant-api03-" + b64u(80), "sk-ant-api03-" + b64u(80), []string{"sk-ant-short"}},
		{"openai-api-key", "sk-proj-" + b64u(64), "sk-proj-" + b64u(64), []string{"sk-proj-abc"}},
		{"google-api-key", "key=AIzaSyA" + b64u(32) + "&q=1", "AIzaSyA" + b64u(32),
			[]string{"AIzaSyA" + b64u(31) + " short", "AIzaSyA" + b64u(33) + " long"}},
		{"npm-token", "//registry.npmjs.org/:_authToken=npm_" + alnum36, "npm_" + alnum36, []string{"npm_install", "npm_" + alnum36 + "x"}},
		{"pypi-token", "upload with pypi-AgEIcHlwaS5vcmc" + b64u(90) + "\n", "AgEIcHlwaS5vcmc" + b64u(90), []string{"pypi-AgEIcHlwaS5vcmcshort"}},
		{"huggingface-token", "HF hf_" + strings.Repeat("AbCdEfGhIj", 3) + "KlMn end", "hf_" + strings.Repeat("AbCdEfGhIj", 3) + "KlMn", []string{"hf_hub_download(repo)"}},
		{"digitalocean-token", "dop_v1_" + hex(64), "dop_v1_" + hex(64), []string{"dop_v1_abc"}},
		{"jwt", "cookie: session=" + jwt + "; Path=/", jwt,
			[]string{"eyJhbGciOiJIUzI1NiJ9 header only", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0 two parts"}},
		{"private-key", "key:\n" + pem + "\nafter\n", pem,
			[]string{"-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"}},
		{"private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n", "b3BlbnNzaC1rZXktdjEAAAAA", nil},
		{"bearer-token", "curl -H 'Authorization: Bearer abc123def456ghi789' https://x", "abc123def456ghi789",
			[]string{"Authorization: Bearer\n", "authorization failed for user bob", "Authorization: Bearer ****\n"}},
		{"basic-auth", "Authorization: Basic dXNlcjpwYXNzd29yZA==\r\n", "dXNlcjpwYXNzd29yZA==", []string{"Authorization: Basic <credentials>\n"}},
		{"authorization", `{"authorization": "s3cr3tv4lu3"}`, "s3cr3tv4lu3", nil},
		{"bearer-token", "using Bearer abcdefghijklmnop1234 for api", "abcdefghijklmnop1234", []string{"Bearer token expired", "the bearer abcdefghijklmnop1234x"[:19]}},
		{"url-password", "DATABASE_URL=postgres://admin:S3cr3tP4ss@db.example.com:5432/app", "S3cr3tP4ss",
			[]string{"https://example.com:8443/path", "https://user@example.com/", "redis://:@host", "ssh://git@github.com:org/repo"}},
		{"password", "password=hunter2horse&user=bob", "hunter2horse",
			[]string{"password=\n", "password: ****\n", "test_password_reset PASSED", "/etc/passwd: No such file", "passwords are hashed", "if password == other:"}},
		{"password", "db passwd: s3cr3tpw\n", "s3cr3tpw", []string{"passwd: all authentication tokens updated successfully"}},
		{"password", "mysql --password s3cr3tpw -h db", "s3cr3tpw", []string{"--password\n"}},
		{"password", `{"user":"bob","password":"c0rrect h0rse"}`, "c0rrect h0rse", []string{`{"password": null}`, `password: "${DB_PASSWORD}"`}},
		{"secret", "client_secret=Zm9vYmFyYmF6cXV4", "Zm9vYmFyYmF6cXV4", []string{"secret=short", "secrets: 3", "secret_santa: enabled"}},
		{"token", "export GITLAB_TOKEN=abcdef0123456789xyz\n", "abcdef0123456789xyz",
			[]string{"max_tokens: 4096", "token_count: 12345678", "tokenizer: bert-base-uncased", "num_tokens=512"}},
		{"api-key", `"api_key": "AbCdEf0123456789"`, "AbCdEf0123456789", []string{"api_key: null", "api-key: %s"}},
		{"credential", "GOOGLE_CREDENTIALS=Zx8Qv2Lm9Wt4Rk7P\n", "Zx8Qv2Lm9Wt4Rk7P", []string{"credentials = load_credentials(path)", "creds: ~/.aws/credentials"}},
		{"auth", `{"auths":{"r.example.com":{"auth":"ZGVwbG95OlBhc3N3MHJk"}}}`, "ZGVwbG95OlBhc3N3MHJk", []string{"author: Jane Smith", "auth: required", "oauth_flow = OAuth2Session(client)"}},
		{"key", "DefaultEndpointsProtocol=https;AccountName=acct1;AccountKey=Qx7Lz2Wm9Rt4Vk8Np3Jc6Hy1Bd5Gf0Sa==;EndpointSuffix=core.windows.net", "Qx7Lz2Wm9Rt4Vk8Np3Jc6Hy1Bd5Gf0Sa==", []string{"private_key = load_pem(path)", "encryption_key_id: alias/app"}},
		{"session", "GET /app?session_id=Zm9vYmFyYmF6cXV4MTIzNDU2 HTTP/1.1", "Zm9vYmFyYmF6cXV4MTIzNDU2", []string{"session = requests.Session()", "session: 3 of 5"}},
		{"cookie", "< Set-Cookie: _app_session=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5YWJj--8f14e45fceea167a; Path=/; HttpOnly", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5YWJj--8f14e45fceea167a",
			[]string{"Set-Cookie: lang=en; Path=/", "cookie: theme=dark; Max-Age=3600"}},
		{"cli-password", "+ curl -fsS -u deploy:Wq9zLr3TnX7vKm2P https://artifacts.example.com/upload", "Wq9zLr3TnX7vKm2P",
			[]string{"curl -u deploy https://example.com", "docker run -p 8080:80 nginx", "mysql -p -h db", "ssh -p 2222 host"}},
		{"cli-password", "mysql -uroot -pTq7zWm2xLp9RsV4c -h db.internal", "Tq7zWm2xLp9RsV4c", nil},
		{"cli-password", "docker login -u bot -p Nv8cQ2wZr5LtKx3m registry.example.com", "Nv8cQ2wZr5LtKx3m", nil},
		{"cli-password", "sshpass -p 'Hq2Lz9Wx7Vr3' ssh deploy@host", "Hq2Lz9Wx7Vr3", nil},
		{"cli-password", "redis-cli -h cache -a Rk8Vq2Lz7Wx3Tn5M ping", "Rk8Vq2Lz7Wx3Tn5M", nil},
		{"netrc-password", "machine api.example.com login bot password Kd9vW2qLz7RxPn4t\n", "Kd9vW2qLz7RxPn4t",
			[]string{"machine learning password reset flow", "machine host.example.com login log password pass"}},
		{"netrc-password", "machine api.example.com\n  login bot\n  password Kd9vW2qLz7RxPn4t\n", "Kd9vW2qLz7RxPn4t", nil},
		{"signature", "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig=Xq9zLr2Vw7Tk5Mb3Hy6Pd1%2BQc8%3D&se=2030", "Xq9zLr2Vw7Tk5Mb3Hy6Pd1%2BQc8%3D", []string{"signature = sign(payload)", "sig: sha256"}},
	}, shapeCatalogueCases()...)
}

func TestCatalogue(t *testing.T) {
	p := mustPolicy(t, Options{})
	covered := map[string]bool{}
	for _, c := range catalogueCases() {
		covered[c.kind] = true
		t.Run(c.kind, func(t *testing.T) {
			out := checkAllWays(t, p, c.in, c.secret)
			if strings.Contains(out, c.secret) {
				t.Errorf("secret visible: %q", out)
			}
			if !strings.Contains(out, "[REDACTED:"+c.kind+"]") {
				t.Errorf("no %s marker: %q", c.kind, out)
			}
			for _, m := range c.miss {
				if got := checkAllWays(t, p, m, ""); got != m {
					t.Errorf("near miss %q changed to %q", m, got)
				}
			}
		})
	}
	for _, k := range Catalogue() {
		if !covered[k] {
			t.Errorf("catalogue kind %s has no test case", k)
		}
	}
	if n := len(Catalogue()); n < 20 {
		t.Errorf("catalogue has %d kinds, want at least 20", n)
	}
}

// TestNoFalsePositives feeds ordinary log text: hashes, UUIDs, paths, code.
func TestNoFalsePositives(t *testing.T) {
	p := mustPolicy(t, Options{})
	for _, in := range []string{
		"commit da39a3ee5e6b4b0d3255bfef95601890afd80709\n",
		"request 123e4567-e89b-12d3-a456-426614174000 done\n",
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n",
		"tests/test_api.py::test_token_refresh PASSED                  [ 12%]\n",
		"src/auth/password.c:12:5: warning: unused variable 'secret_len' [-Wunused-variable]\n",
		"  File \"/usr/lib/python3.12/site-packages/app/secret_store.py\", line 42, in get_token\n",
		"https://github.com/capwrap/capwrap/blob/main/README.md\n",
		"Password: \n", "Enter passphrase for key '/root/.ssh/id_ed25519': \n",
		"\x1b[32mPASSED\x1b[0m\r\n", "binary \x00\xff\xfe\x80 bytes\n",
		"-----BEGIN PGP SIGNATURE-----\n",
		"eyJ", "AKIA", "ghp_", "://", "Bearer", "token=", "Authorization:",
	} {
		if got := checkAllWays(t, p, in, ""); got != in {
			t.Errorf("%q changed to %q", in, got)
		}
	}
}

func TestSources(t *testing.T) {
	const v = "s3cr3t-V@lue/with+chars"
	env := []string{
		"HOME=/root", "GITHUB_TOKEN=" + v, "SHORT_TOKEN=abc12", "DEPLOY_KEY=deploykey-value-1",
		"my_password=pw-lowercase-name", "DB_CONNECTION_STRING=Server=x;Pwd=conn-secret-9", "PLAIN=plain-value-123",
		"TOKENIZERS_PARALLELISM=false", "AWS_SECRET_ACCESS_KEY=aws-secret-env-1234",
	}
	p := mustPolicy(t, Options{Environ: env, EnvNames: []string{"PLAIN", "MISSING"}, Values: []string{"file-value-1", "", "x7"}, Patterns: []string{`ticket-[0-9]{4}`, `(?i)internal-[a-z]+`}})
	cases := []struct {
		name, in, secret, marker string
	}{
		{"env name TOKEN", "echo " + v + "\n", v, "[REDACTED:env:GITHUB_TOKEN]"},
		{"env name _KEY", "k=deploykey-value-1.", "deploykey-value-1", "[REDACTED:env:DEPLOY_KEY]"},
		{"env name lower case", "pw-lowercase-name", "pw-lowercase-name", "[REDACTED:env:my_password]"},
		{"env name CONNECTION_STRING", "conn Server=x;Pwd=conn-secret-9 ok", "Server=x;Pwd=conn-secret-9", "[REDACTED:env:DB_CONNECTION_STRING]"},
		{"env name SECRET", "aws-secret-env-1234", "aws-secret-env-1234", "[REDACTED:env:AWS_SECRET_ACCESS_KEY]"},
		{"EnvNames", "value plain-value-123 here", "plain-value-123", "[REDACTED:env:PLAIN]"},
		{"Values", "read file-value-1\n", "file-value-1", "[REDACTED:value]"},
		{"short Values", "ax7b", "x7", "[REDACTED:value]"},
		{"base64 std", "b64 " + base64.StdEncoding.EncodeToString([]byte(v)) + " end", base64.StdEncoding.EncodeToString([]byte(v)), "[REDACTED:env:GITHUB_TOKEN]"},
		{"base64 url raw", "b64 " + base64.RawURLEncoding.EncodeToString([]byte(v)) + " end", base64.RawURLEncoding.EncodeToString([]byte(v)), "[REDACTED:env:GITHUB_TOKEN]"},
		{"base64 inside basic auth", "Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+v)), "", "[REDACTED:"},
		{"query escaped", "?t=" + url.QueryEscape(v), url.QueryEscape(v), "[REDACTED:env:GITHUB_TOKEN]"},
		{"path escaped", "/x/" + url.PathEscape(v) + "/y", url.PathEscape(v), "[REDACTED:env:GITHUB_TOKEN]"},
		{"pattern with prefix", "ref ticket-1234 done", "ticket-1234", "[REDACTED:pattern]"},
		{"pattern without prefix", "an INTERNAL-host here", "INTERNAL-host", "[REDACTED:pattern]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := checkAllWays(t, p, c.in, c.secret)
			if c.secret != "" && strings.Contains(out, c.secret) || !strings.Contains(out, c.marker) {
				t.Errorf("got %q, want %s and no %q", out, c.marker, c.secret)
			}
		})
	}
	for _, keep := range []string{"abc12", "false", "/root", "ticket-12 no", "x8"} {
		if got := checkAllWays(t, p, keep, ""); got != keep {
			t.Errorf("%q changed to %q", keep, got)
		}
	}
	// JSON escaping of a value with quotes and a newline.
	q := "quote\"and\nnewline"
	pq := mustPolicy(t, Options{Values: []string{q}})
	js, _ := json.Marshal(map[string]string{"v": q})
	if out := checkAllWays(t, pq, string(js), ""); strings.Contains(out, `quote\"and`) {
		t.Errorf("JSON form visible: %q", out)
	}
}

func TestMultiLineValue(t *testing.T) {
	key := "line-one-secret\nline-two-secret\nline-three-secret"
	p := mustPolicy(t, Options{Environ: []string{"SSH_PRIVATE=" + key}})
	for _, in := range []string{
		key + "\n", // printed as is
		"line-one-secret line-two-secret line-three-secret\n", // echo $SSH_PRIVATE: newlines became spaces
		strings.ReplaceAll(key, "\n", "\r\n"),                 // through a terminal
		"> line-two-secret\n",                                 // one line quoted
	} {
		out := checkAllWays(t, p, in, "line-two-secret")
		for _, frag := range []string{"line-one-secret", "line-two-secret", "line-three-secret"} {
			if strings.Contains(out, frag) {
				t.Errorf("%q: %q visible in %q", in, frag, out)
			}
		}
	}
}

func TestRegressions(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		writes []string
		want   string
	}{
		{"aa then ab", []string{"aa", "ab"}, []string{"aa", "ab"}, "[REDACTED:value]"},
		{"aab split", []string{"aa", "ab"}, []string{"a", "ab", "x"}, "[REDACTED:value]x"},
		{"overlapping", []string{"abcd", "bc"}, []string{"xabcdx"}, "x[REDACTED:value]x"},
		{"overlapping split", []string{"abcd", "bc"}, []string{"xa", "bc", "dx"}, "x[REDACTED:value]x"},
		{"prefix value", []string{"temp4now", "temp4now111dd"}, []string{"a temp4now111dd b"}, "a [REDACTED:value] b"},
		{"prefix value short", []string{"temp4now", "temp4now111dd"}, []string{"a temp4now111 b"}, "a [REDACTED:value]111 b"},
		{"prefix value split", []string{"temp4now", "temp4now111dd"}, []string{"a temp4", "now1", "11dd b"}, "a [REDACTED:value] b"},
		{"final flush", []string{"zzzz"}, []string{"abc zzz"}, "abc zzz"},
		{"final flush secret", []string{"zzzz"}, []string{"abc zz", "zz"}, "abc [REDACTED:value]"},
		{"adjacent merged", []string{"abc", "def"}, []string{"abcdef"}, "[REDACTED:value]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustPolicy(t, Options{Values: c.values})
			var out bytes.Buffer
			w := p.NewWriter(&out)
			for _, s := range c.writes {
				w.Write([]byte(s))
			}
			w.Close()
			if out.String() != c.want {
				t.Errorf("got %q, want %q", out.String(), c.want)
			}
			in := strings.Join(c.writes, "")
			checkAllWays(t, p, in, "")
		})
	}
}

func TestReplacedCountsRuns(t *testing.T) {
	p := mustPolicy(t, Options{Values: []string{"abcd", "bc", "xyz1"}})
	var out bytes.Buffer
	w := p.NewWriter(&out)
	w.Write([]byte("abcd xyz1xyz1 abcd"))
	w.Close()
	if got := w.Replaced(); got != 3 {
		t.Errorf("Replaced = %d, want 3 (%q)", got, out.String())
	}
}

// TestPromptReleasedAtOnce: a context rule holds back only what follows its
// keyword.
func TestPromptReleasedAtOnce(t *testing.T) {
	p := mustPolicy(t, Options{})
	for _, prompt := range []string{"Password: ", "[sudo] password for bob: ", "Enter passphrase: ", "token = ", "PASSWORD="} {
		var out bytes.Buffer
		w := p.NewWriter(&out)
		w.Write([]byte(prompt))
		if out.String() != prompt {
			t.Errorf("after writing %q, output is %q before Close", prompt, out.String())
		}
		// A token's value must look random to be masked (SPEC §6: bare
		// words are masked only with a secret's shape).
		w.Write([]byte("hunter2Xq9zLr2Vw7\n"))
		w.Close()
		if strings.Contains(out.String(), "hunter2") != strings.Contains(prompt, "sudo") {
			t.Errorf("%q: value visible: %q", prompt, out.String())
		}
	}
}

// TestBytesPassUnchanged: everything but secrets is copied byte for byte.
func TestBytesPassUnchanged(t *testing.T) {
	p := mustPolicy(t, Options{Values: []string{"s3cret-value"}})
	var in []byte
	for i := 0; i < 256; i++ {
		in = append(in, byte(i))
	}
	in = append(in, "\x1b[31mred\x1b[0m\r\nprogress 10%\rprogress 20%\r\n\xff\xfe invalid \xc3\x28 utf8 \x00\x00"...)
	plain := append([]byte{}, in...)
	in = append(in, "s3cret-value\x00\r\n"...)
	want := append(plain, "[REDACTED:value]\x00\r\n"...)
	for _, sizes := range [][]int{nil, {1}, {3, 7}} {
		if got := redactChunks(t, p, in, sizes); !bytes.Equal(got, want) {
			t.Errorf("writes %v: got %q, want %q", sizes, got, want)
		}
	}
}

// TestHoldbackBounded: with no secret in sight, all but Holdback() bytes are
// out after each Write, and bytes written out are never rewritten.
func TestHoldbackBounded(t *testing.T) {
	p := mustPolicy(t, Options{Environ: []string{"API_TOKEN=tok-123456"}, Patterns: []string{"foo[0-9]+"}})
	if h := mustPolicy(t, Options{}).Holdback(); h != 4096 {
		t.Errorf("built-in Holdback = %d, documented 4096", h)
	}
	if h := p.Holdback(); h != lineMax+1 {
		t.Fatalf("Holdback with a pattern = %d, documented 4097", h)
	}
	in := testlog.Make(256<<10, 50)
	var out bytes.Buffer
	w := p.NewWriter(&out)
	var prev []byte
	total := 0
	for i := 0; i < len(in); i += 777 {
		chunk := in[i:min(i+777, len(in))]
		w.Write(chunk)
		total += len(chunk)
		if !bytes.HasPrefix(out.Bytes(), prev) {
			t.Fatal("released bytes were rewritten")
		}
		prev = append(prev[:0], out.Bytes()...)
	}
	w.Close()
	// Each Write's output covers all input but the holdback: compare positions
	// through the reference (markers change lengths).
	ref, _ := reference(p, in)
	if !bytes.Equal(out.Bytes(), ref) {
		t.Fatal("output differs from the reference")
	}
	// Long plain text: the held part never exceeds Holdback.
	out.Reset()
	w = p.NewWriter(&out)
	plain := bytes.Repeat([]byte("plain text line without anything\n"), 2000)
	for i := 0; i < len(plain); i += 1000 {
		w.Write(plain[i:min(i+1000, len(plain))])
		if held := min(i+1000, len(plain)) - out.Len(); held > p.Holdback() {
			t.Fatalf("holding %d bytes, bound %d", held, p.Holdback())
		}
	}
	w.Close()
}

// TestUndecidable: what cannot be decided within the window is dropped and
// marked, never released.
func TestUndecidable(t *testing.T) {
	p := mustPolicy(t, Options{Patterns: []string{"(?i)zz[0-9]+"}})
	body := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\n", 4000) // 148 KB, no END
	in := "-----BEGIN PRIVATE KEY-----\n" + body + "tail"
	out := checkAllWays(t, p, in, "QUJD")
	// The first pemMax bytes are dropped; after that the block is no key.
	if want := "[REDACTED:private-key]" + in[pemMax:]; out != want {
		t.Errorf("got %q..., want %q...", out[:100], want[:100])
	}
	// A line longer than lineMax with a line pattern: the rest is dropped.
	long := strings.Repeat("a", lineMax+500) + "\nnext zz12 line\n"
	out = checkAllWays(t, p, long, "aaaa")
	if want := strings.Repeat("a", lineMax) + "[REDACTED:undecidable]\nnext [REDACTED:pattern] line\n"; out != want {
		t.Errorf("got ...%q", tail([]byte(out)))
	}
	// A password value longer than its window.
	pw := "password=" + strings.Repeat("p", 5000) + " end"
	if out = checkAllWays(t, mustPolicy(t, Options{}), pw, "pppp"); out != "password=[REDACTED:password] end" {
		t.Errorf("got %q", tail([]byte(out)))
	}
}

func TestInvalidPattern(t *testing.T) {
	for _, c := range []struct {
		pats []string
		want string
	}{
		{[]string{"ok", "a("}, `invalid --redact-pattern "a(": `},
		{[]string{"ok", ""}, `invalid --redact-pattern "": empty pattern`}, // it masked nothing, silently
	} {
		_, err := NewPolicy(Options{Patterns: c.pats})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %s...", c.pats, err, c.want)
		}
		if err2 := CheckPatterns(c.pats); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%q: CheckPatterns = %v, NewPolicy %v", c.pats, err2, err)
		}
	}
}

func TestString(t *testing.T) {
	p := mustPolicy(t, Options{Environ: []string{"MY_TOKEN=tok-abcdef"}})
	// (--auth tok-abcdef would be an assignment too, named after the
	// catalogue's kind: SPEC §6 added auth to the key words.)
	if got := p.String("deploy --using tok-abcdef --region eu"); got != "deploy --using [REDACTED:env:MY_TOKEN] --region eu" {
		t.Errorf("String = %q", got)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(b []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(b), nil
}

func TestWriteErrors(t *testing.T) {
	p := mustPolicy(t, Options{})
	w := p.NewWriter(&failWriter{})
	if _, err := w.Write([]byte("hello\n")); err == nil || err.Error() != "disk full" {
		t.Errorf("Write err = %v", err)
	}
	if _, err := w.Write([]byte("again\n")); err == nil {
		t.Error("error not sticky")
	}
	if err := w.Close(); err == nil {
		t.Error("Close lost the error")
	}
	w = p.NewWriter(&bytes.Buffer{})
	w.Close()
	if _, err := w.Write([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
}

// TestTokenAfterEscape: a token shape that is masked on its own is masked
// too right after an ANSI colour code or a JSON/string escape, whose last
// byte is a letter (glued), and still not inside a longer word.
func TestTokenAfterEscape(t *testing.T) {
	p, err := NewPolicy(Options{})
	if err != nil {
		t.Fatal(err)
	}
	tested := 0
	for _, c := range catalogueCases() {
		alone := string(redactChunks(t, p, []byte(c.secret+"\n"), nil))
		if strings.Contains(alone, c.secret) {
			continue // needs its context (password=, Bearer ...): not a token shape
		}
		tested++
		for _, pre := range []string{"\x1b[31m", "\x1b[m", "\x1b[1;32m", "\x1b[0m", "\r\x1b[K", "\x1b[2K", "\x1b[38;5;196m", `{"log": "done\n`, `\t`, `"\r`} {
			in := pre + c.secret + "\x1b[0m\n"
			if out := string(redactChunks(t, p, []byte(in), nil)); strings.Contains(out, c.secret) {
				t.Errorf("%s after %q not masked: %q", c.kind, pre, out)
			}
		}
	}
	if tested < 15 {
		t.Fatalf("only %d token shapes tested", tested)
	}
	// Still glued: a letter before the token that no escape ends with. (A
	// digit or ";" and a letter, as in "5xAKIA…", reads as the end of a
	// control sequence and is masked: two bytes cannot tell them apart,
	// and masking is the safe side.)
	for _, miss := range []string{"xAKIAIOSFODNN7EXAMPLE\n", "mAKIAIOSFODNN7EXAMPLE\n", "amAKIAIOSFODNN7EXAMPLE\n"} {
		if out := string(redactChunks(t, p, []byte(miss), nil)); out != miss {
			t.Errorf("%q changed to %q", miss, out)
		}
	}
}
