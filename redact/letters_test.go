package redact

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// Values of letters only and prefixed numbers (issue 27, breaker findings
// of r27-fix-letters): a value with no digit after a secret key was shown,
// depending on how the key was written (password=V, password: "V",
// token=V), and so were long octal and binary numbers. Every value is
// invented.

// TestLettersMasked: random-looking letters after any secret key; any
// word of 3 letters or more after a password-like key in a tight
// assignment (password=V) or quoted after a separator.
func TestLettersMasked(t *testing.T) {
	checkValueCases(t, []valueCase{
		{"password=XiHdpVCSUQJJyh\n", "password=[REDACTED:password]\n"},
		{"password: XiHdpVCSUQJJyh\n", "password: [REDACTED:password]\n"},
		{"password=\"XiHdpVCSUQJJyh\"\n", "password=\"[REDACTED:password]\"\n"},
		{"token=XiHdpVCSUQJJyh\n", "token=[REDACTED:token]\n"},
		{"api_key=XiHdpVCSUQJJyh\n", "api_key=[REDACTED:api-key]\n"},
		{"client_secret=XiHdpVCSUQJJyh\n", "client_secret=[REDACTED:secret]\n"},
		{"license_key=XiHdpVCSUQJJyh\n", "license_key=[REDACTED:key]\n"},
		{"token=qwhzkxmvbnrtplsd\n", "token=[REDACTED:token]\n"},
		{"secret: \"ZKQWPXMVNBHTRLDC\"\n", "secret: \"[REDACTED:secret]\"\n"},
		{"password=correcthorsebatterystaple\n", "password=[REDACTED:password]\n"},
		{"password=abcdefghij\n", "password=[REDACTED:password]\n"},
		{"{\"password\": \"hunter\"}\n", "{\"password\": \"[REDACTED:password]\"}\n"},
		{"password = \"changeme\"\n", "password = \"[REDACTED:password]\"\n"},
		{"db_passwd='letmein' ok\n", "db_passwd='[REDACTED:password]' ok\n"},
		{"login user=bob pwd=sunshine\n", "login user=bob pwd=[REDACTED:password]\n"},
	})
}

// TestLettersCodeIntact: code, placeholders, types, prose and words after
// keys that are no password's stay.
func TestLettersCodeIntact(t *testing.T) {
	same := []string{
		"password=password\n", "password=passwd\n", "password=pwd\n",
		"password=args.password\n", "password=None\n", "password: str\n",
		"password: required\n", "password=getpass()\n", "password=new_password\n",
		"password=userPassword\n", "f(user, password=value)\n", "connect(password=creds, host=h)\n",
		"passwd = acct\n", "Password = ignored\n", "token=authentication\n",
		"token: getTokenFromHeaderValue\n", "secret=AbstractAuthenticationTokenProviderFactoryBean\n",
		"-- the password 'reset' flow\n", "could pass 'yes' as the INCREMENT value.\n",
		"token=pkcsxvfb\n", "api_key=keychain\n",
	}
	var cases []valueCase
	for _, s := range same {
		cases = append(cases, valueCase{s, s})
	}
	checkValueCases(t, cases)
}

// TestPrefixedNumbers: an octal or binary number too long and irregular for
// a constant is a value; file modes and bit masks stay.
func TestPrefixedNumbers(t *testing.T) {
	checkValueCases(t, []valueCase{
		{"secret=0o7312345670123\n", "secret=[REDACTED:secret]\n"},
		{"api_key=0b101100111000111101\n", "api_key=[REDACTED:api-key]\n"},
		{"token: \"0O73123456701\"\n", "token: \"[REDACTED:token]\"\n"},
		{"secret=0x9f8e7d6c5b4a39281726354\n", "secret=[REDACTED:secret]\n"},
		{"secret=0o755\n", "secret=0o755\n"},
		{"secret=0o104755\n", "secret=0o104755\n"},
		{"api_key=0b1010\n", "api_key=0b1010\n"},
		{"secret=0b11111111000000001\n", "secret=0b11111111000000001\n"},
		{"secret=0b1011_0011_1000_1111_01\n", "secret=0b1011_0011_1000_1111_01\n"},
	})
}

// TestLettersRandomSample measures what the breaker measured: 200 random
// values per form and shape, counted shown when the value is still in the
// output. Bounds: a word after a password key is masked always; random
// letters after any key leak in a few draws of 100 at most (see
// randomLetters); the seed is fixed.
func TestLettersRandomSample(t *testing.T) {
	const lower = "abcdefghijklmnopqrstuvwxyz"
	const mixed = lower + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	const alnum = mixed + "0123456789"
	r := rand.New(rand.NewSource(27))
	draw := func(n int, set string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[r.Intn(len(set))]
		}
		return string(b)
	}
	shapes := []struct {
		n   int
		set string
		max int // shown of 200 after token=
	}{{16, lower, 10}, {14, mixed, 10}, {24, mixed, 2}, {10, alnum, 12}}
	forms := []struct {
		f        string
		password bool
	}{{"password=%s", true}, {"password: \"%s\"", true}, {"token=%s", false}}
	p := mustPolicy(t, Options{})
	for _, sh := range shapes {
		for _, fm := range forms {
			var in bytes.Buffer
			vals := make([]string, 200)
			for i := range vals {
				vals[i] = draw(sh.n, sh.set)
				fmt.Fprintf(&in, fm.f+"\n", vals[i])
			}
			out := string(redactChunks(t, p, in.Bytes(), nil))
			shown := 0
			for _, v := range vals {
				if strings.Contains(out, v) {
					shown++
				}
			}
			max := sh.max
			if fm.password {
				max = 0
			}
			t.Logf("%q, %d of %q: %d of 200 shown", fm.f, sh.n, sh.set[len(sh.set)-1:], shown)
			if shown > max {
				t.Errorf("%q with %d random bytes of %q: %d of 200 shown, want at most %d", fm.f, sh.n, sh.set, shown, max)
			}
		}
	}
}
