package redact

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/capwrap/capwrap/redact/internal/testlog"
)

// fuzzPolicy has every source: secret-looking environment values, a
// --redact-env name, literal values (one a prefix of another, overlapping
// ones, a short one), patterns with and without a literal prefix, and the
// catalogue.
var fuzzPolicy = sync.OnceValue(func() *Policy {
	p, err := NewPolicy(Options{
		Environ: []string{"API_TOKEN=Zq9-xK2_mP4wR7tY", "SSH_PRIVATE=line-one-key\nline-two-key", "PLAIN=plain-val-123", "HOME=/root",
			"DEPLOY_TOKEN=Kz9/Lq2+Xw7 Rt4=Vm8&Np3",
			"PRIVATE_REGISTRY=registry.example.com"},
		AllowEnv: []string{"PRIVATE_REGISTRY"},
		EnvNames: []string{"PLAIN"},
		Values:   []string{"temp4now", "temp4now111dd", "abcd", "bc", "aa", "ab"},
		Patterns: []string{`ticket-[0-9]{4}`, `(?i)internal-[a-z]+`},
	})
	if err != nil {
		panic(err)
	}
	return p
})

// chunkSizes turns fuzz bytes into write sizes (1 to 256 bytes each, and a
// large one for a byte 255 so 64 KiB boundaries are crossed too).
func chunkSizes(cuts []byte) []int {
	if len(cuts) == 0 {
		return []int{1}
	}
	sizes := make([]int, len(cuts))
	for i, c := range cuts {
		sizes[i] = int(c) + 1
		if c == 255 {
			sizes[i] = 70000
		}
	}
	return sizes
}

func fuzzSeeds(f *testing.F) {
	for _, c := range catalogueCases() {
		f.Add([]byte(c.in), []byte{1, 7, 0, 3})
		for _, m := range c.miss {
			f.Add([]byte(m), []byte{2})
		}
	}
	for _, c := range classCases() {
		f.Add([]byte(c.in), []byte{1, 3, 0})
		f.Add([]byte(c.in), []byte{255, 0})
	}
	// The forms of environment values: base64 wrapped at 76 columns,
	// percent-encoded in lower case and with %20.
	f.Add([]byte("QnoXTHEyWHc5UnQ0Vms4TnAzSmM2SHkxTWQ1R2YwU2EyUWU3V3U0SW85UGwzS2o4Tmg2QmcxVmY1\nQ2QwWHM3WmEyTG05\n"), []byte{7, 0, 3})
	f.Add([]byte("a=Kz9%2fLq2%2bXw7%20Rt4%3dVm8%26Np3\nb=Kz9%2FLq2%2BXw7+Rt4%3DVm8%26Np3 push registry.example.com\n"), []byte{1})
	f.Add([]byte("xabcdx aab temp4now111dd temp4now1 Zq9-xK2_mP4wR7tY"), []byte{0})
	f.Add([]byte("Password: hunter2\nticket-1234 INTERNAL-x\n"), []byte{5, 1})
	f.Add(testlog.Make(4096, 10), []byte{200, 13, 255})
	// A write that ends inside the \u0022 closing a value, or right after a
	// backslash in a quoted value (the value was once judged unclosed).
	f.Add([]byte(`{\u0022Token\u0022:\u0022Tz8kq2lM9Xw4vR7n\u0022}the x`+"\n"), []byte{41})
	f.Add([]byte(`db_password = "Xk9mP2\"vL8qR4tW7"`+"\n"), []byte{21})
}

// FuzzChunking: the output for any split into writes equals the output of
// one write.
func FuzzChunking(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		p := fuzzPolicy()
		whole := redactChunks(t, p, data, nil)
		if got := redactChunks(t, p, data, chunkSizes(cuts)); !bytes.Equal(got, whole) {
			t.Fatalf("chunked output differs:\n got %q\nwant %q", got, whole)
		}
	})
}

// FuzzReference: the streaming output equals the whole-buffer reference.
func FuzzReference(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		p := fuzzPolicy()
		want, n := reference(p, data)
		var out bytes.Buffer
		w := p.NewWriter(&out)
		sizes := chunkSizes(cuts)
		for i, k := 0, 0; i < len(data); k++ {
			m := min(len(data)-i, sizes[k%len(sizes)])
			w.Write(data[i : i+m])
			i += m
		}
		w.Close()
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("stream differs from reference:\n got %q\nwant %q", out.Bytes(), want)
		}
		if w.Replaced() != n {
			t.Fatalf("Replaced = %d, reference %d", w.Replaced(), n)
		}
	})
}

// plantable secrets: each is masked whatever surrounds it (with the given
// delimiters); secret is the part that must never show.
var plantable = []struct{ before, secret, after string }{
	{"", "Zq9-xK2_mP4wR7tY", ""},
	{"", "plain-val-123", ""},
	{"", "temp4now111dd", ""},
	{" ", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "\n"},
	{" ", "AKIAIOSFODNN7EXAMPLE", "\n"},
	{" ", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "\n"},
	{" ", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "\n"},
	{" ", "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "\n"},
	{"\n-----BEGIN RSA PRIVATE KEY-----\n", "MIIEowIBAAKCAQEAfakefakefakefake\nZmFrZWtleWZha2VrZXlm", "\n-----END RSA PRIVATE KEY-----\n"},
	{" password=", "Hunter2Horse!", "\n"},
	{" https://user:", "Pa55w0rdXYZ", "@example.com/\n"},
	{" Authorization: Bearer ", "abc123def456ghi789jkl", "\n"},
	{" mysql -uroot -p", "Tq7zWm2xLp9RsV4c", " -h db\n"},
	{" <password>", "Rz8qL2vWn5TkMx7c", "</password>"},
	{` {\"password\":\"`, "Hx7kP2qLm9zRt4Wv", `\"}`},
	{" machine h.example.com login u password ", "Kd9vW2qLz7RxPn4t", "\n"},
	{" Set-Cookie: sid=", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5YWJj", "; Path=/\n"},
	{" https://", "Vk2Lq9Zx7Wr3Tn8Mp5Jc4Hd6Yb1Gs0Fa", "@git.example.com/r.git\n"},
	{" map[Authorization:[Basic ", "ZGVwbG95OlBhc3N3MHJkSGVyZTEyMw==", "]]\n"},
}

// FuzzPlantedSecret: a planted secret never appears in the output, whole or
// as any fragment of 8 bytes or more, however the writes are split.
func FuzzPlantedSecret(f *testing.F) {
	f.Add([]byte("before "), []byte(" after"), uint8(0), []byte{1})
	f.Add([]byte("x"), []byte("AKIA"), uint8(4), []byte{3, 255})
	f.Add([]byte("-----BEGIN "), []byte("password"), uint8(8), []byte{0})
	f.Add([]byte("tests/test_api.py::test_password PASSED\n"), []byte("E   token=\n"), uint8(9), []byte{100, 200})
	f.Fuzz(func(t *testing.T, prefix, suffix []byte, which uint8, cuts []byte) {
		pl := plantable[int(which)%len(plantable)]
		in := string(prefix) + pl.before + pl.secret + pl.after + string(suffix)
		out := string(redactChunks(t, fuzzPolicy(), []byte(in), chunkSizes(cuts)))
		around := string(prefix) + "\x00" + pl.before + "\x00" + pl.after + "\x00" + string(suffix)
		for n := 8; n <= len(pl.secret); n++ {
			for i := 0; i+n <= len(pl.secret); i++ {
				frag := pl.secret[i : i+n]
				if strings.Contains(out, frag) && !strings.Contains(around, frag) {
					t.Fatalf("fragment %q of %q visible in %q", frag, pl.secret, out)
				}
			}
			if n == 8 {
				n = len(pl.secret) - 1 // a longer fragment contains an 8-byte one
			}
		}
	})
}
