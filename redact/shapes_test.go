package redact

import (
	"hash/fnv"
	"math/rand"
	"strings"
	"testing"

	"github.com/capwrap/capwrap/redact/internal/scan"
)

// shapeFake is one row's test value: in is what is written (lead, the
// token, in that order), secret the part that must be masked.
type shapeFake struct {
	row    shapeRow
	kw     string
	lead   string // bytes the format needs before the keyword (need rows, URLs)
	secret string // the masked part
	token  string // lead + what follows: the whole credential as printed
	miss   []string
}

// setBytes lists the members of s in byte order.
func setBytes(s *scan.ByteSet) []byte {
	var out []byte
	for c := 0; c < 256; c++ {
		if s[c] {
			out = append(out, byte(c))
		}
	}
	return out
}

// outside returns a byte that is not in s and is no separator a token could
// end at in a harmless way: it breaks the run where it stands.
func outside(s *scan.ByteSet) byte {
	for _, c := range []byte("gZ#!") {
		if !s[c] {
			return c
		}
	}
	panic("no byte outside the set")
}

// genRun returns n bytes of set, chosen by r. The first byte is never one
// that would make the run look like the start of another part (the tests
// want exactly the documented shape, nothing more).
func genRun(r *rand.Rand, s *scan.ByteSet, n int) string {
	m := setBytes(s)
	b := make([]byte, n)
	for i := range b {
		b[i] = m[r.Intn(len(m))]
	}
	return string(b)
}

// leads are the bytes some formats carry before their keyword.
var shapeLeads = map[string]string{
	"azure-ad-client-secret": "Xq7",
	"terraform-cloud-token":  "aBcDeF0123gHiJ",
	"braintree-access-token": "access_token",
	"telegram-bot-token":     "https://",
	"teams-webhook":          "https://contoso.",
	"zapier-webhook":         "https://",
}

// shapeExtraMisses are near misses a provider's distinctions call for:
// test, sandbox and public keys, and look-alikes in ordinary output.
var shapeExtraMisses = map[string][]string{
	"flutterwave-secret-key":           {"FLWPUBK-0123456789abcdef0123456789abcdef-X"},
	"lob-live-key":                     {"live_pub_0123456789abcdef0123456789abcde", "deliver_live_stream"},
	"braintree-access-token":           {" $production$abcdefgh01234567$0123456789abcdef0123456789abcdef"},
	"supabase-secret-key":              {"sb_publishable_AbCdEfGhIjKlMnOpQrStUvWx"},
	"mapbox-secret-token":              {"pk.eyJ1IjoiZXhhbXBsZXVzZXIiLCJhIjoiY2tmYWtlIn0.AbCdEfGhIjKlMnOpQrStUv", "sk.eyJ1Ijoi.short"},
	"newrelic-user-key":                {"NRJS-0123456789abcdef012", "NRAK-lowercase0123456789abcdef"},
	"launchdarkly-api-key":             {"mob-123e4567-e89b-12d3-a456-426614174000", "api-v2 api-gateway", "api-123e4567e89b12d3a456426614174000"},
	"launchdarkly-sdk-key":             {"sdk-version 1.2.3", "sdk-123e4567-e89b-12d3-a456-42661417400"},
	"notion-token":                     {"secret_santa: enabled", "secret_len = 32", "ntn_short"},
	"octopus-api-key":                  {"API-Gateway returned 502", "OPENAI-API-KEY=", "API-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
	"openai-api-key":                   {"sk-" + strings.Repeat("aB3dE5gH7j", 5), "sk-aB3dE5gH7jaB3dE5gH7jT3BlbkFXaB3dE5gH7jaB3dE5gH7j", "task-runner sk-"},
	"twitter-bearer-token":             {"AAAAAAAAAAAAAAAAAAAAAAAA==", "data: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="},
	"dropbox-token":                    {"openssl.cnf", "ssl.example.com", "sl.short_token"},
	"cloudflare-origin-ca-key":         {"release v1.0-rc1", "v1.0-beta.2 tagged", "v1.0-0123456789abcdef01234567-0123"},
	"mailgun-api-key":                  {"key-value store", "monkey-0123456789abcdef0123456789abcdef", "primary key-0123456789abcdef"},
	"age-secret-key":                   {"age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p", "AGE-SECRET-KEY-1qpzry9x8gf2tvdw0s3jn54khce6mua7lqpzry9x8gf2tvdw0s3jn54khce6mua7l"},
	"databricks-token":                 {"dapi-client v2", "dapi0123456789abcdef0123456789abcde"},
	"sendgrid-api-key":                 {"SG.short.x", "SG.AbCdEfGhIjKlMnOpQrStUv"},
	"dynatrace-token":                  {"dt0c01.st2ey72kqinmh574wmnvi7yn.g3dfpbejymodidaex454m7ywbuvefowkprvmwfass64nfh52px6bndvffm572rzm"},
	"azure-ad-client-secret":           {" 8Q~AbCdEfGhIjKlMnOpQrStUvWxYz0123", "version 1Q~ of it", "Xq78Q~short"},
	"telegram-bot-token":               {"https://api.telegram.org/bot<token>/getMe", "https://api.telegram.org/bot123456:short/getMe"},
	"jfrog-reference-token":            {"cmVmdGtuOjAxOjshort"},
	"vault-service-token":              {"hvs.short", "xhvs.AbCdEfGhIjKlMnOpQrStUvWx"},
	"stripe-webhook-secret":            {"whsec_short", "whsec_"},
	"alibaba-access-key-id":            {"LTAI4G", "LTAI4Gabcdefghij0123456789XYZ"},
	"tencent-secret-id":                {"AKIDabc"},
	"square-access-token":              {"EAAA", "EAAAshort"},
	"gitlab-runner-registration-token": {"GR1348941short"},
	"terraform-cloud-token":            {"see .atlasv1.docs", " .atlasv1." + strings.Repeat("AbCdEf0123", 7)},
	"zapier-webhook":                   {"https://hooks.zapier.com/hooks/catch/ is the endpoint"},
	"teams-webhook":                    {"https://contoso.webhook.office.com/webhookb2/short"},
	"huggingface-org-token":            {"api_org_id = 12", "api_org_" + strings.Repeat("AbCdE", 6) + "0123"},
	"pulumi-access-token":              {"pul-request", "pul-0123456789abcdef"},
	"linear-api-key":                   {"lin_api_short"},
	"replicate-api-token":              {"r8_short"},
	"groq-api-key":                     {"gsk_short"},
	"xai-api-key":                      {"xai-sdk 1.0"},
}

// shapeFakes builds, for every row and keyword, a format-valid fake (random
// bytes of the documented alphabets and lengths, seeded by the row, so the
// same each run: invented values, never real credentials) and its near
// misses: one byte short, one byte long (for a bounded last run), a byte of
// the wrong alphabet in the last run, glued to a longer word, and the
// row's own (shapeExtraMisses).
func shapeFakes() []shapeFake {
	var out []shapeFake
	for _, row := range shapeRows {
		parts, err := parseShape(row.shape)
		if err != nil {
			panic(err)
		}
		for _, kw := range row.keywords {
			h := fnv.New64a()
			h.Write([]byte(row.kind + "\x00" + kw))
			r := rand.New(rand.NewSource(int64(h.Sum64())))
			var body []string
			for _, p := range parts {
				if p.lit != "" {
					body = append(body, p.lit)
				} else {
					body = append(body, genRun(r, p.set, p.min))
				}
			}
			lead := shapeLeads[row.kind]
			join := func(b []string) string { return lead + kw + strings.Join(b, "") }
			f := shapeFake{row: row, kw: kw, lead: lead, token: join(body)}
			f.secret = f.token[len(lead):]
			if row.afterKw {
				f.secret = f.token[len(lead)+len(kw):]
			}
			last := parts[len(parts)-1]
			lb := body[len(body)-1]
			short := append([]string{}, body...)
			short[len(short)-1] = lb[:len(lb)-1]
			f.miss = append(f.miss, join(short))
			if !last.open {
				long := append([]string{}, body...)
				long[len(long)-1] = lb + genRun(r, last.set, last.max+1-len(lb))
				f.miss = append(f.miss, join(long))
			}
			wrong := append([]string{}, body...)
			k := len(lb) / 2
			wrong[len(wrong)-1] = lb[:k] + string(outside(last.set)) + lb[k+1:]
			f.miss = append(f.miss, join(wrong))
			if row.need == "" && !row.afterKw {
				f.miss = append(f.miss, "x"+f.token, "9"+f.token)
			}
			out = append(out, f)
		}
	}
	return out
}

// shapeCatalogueCases gives catalogueCases a case per row: the fake in a log
// line, with its near misses (TestCatalogue, TestTokenAfterEscape and the
// fuzz seeds use them).
func shapeCatalogueCases() []catCase {
	var cs []catCase
	seen := map[string]bool{}
	for _, f := range shapeFakes() {
		c := catCase{kind: f.row.kind, in: "2024-05-01T12:00:00Z INFO deploy: using " + f.token + " for upload\n", secret: f.secret, miss: f.miss}
		if !seen[f.row.kind] {
			seen[f.row.kind] = true
			c.miss = append(c.miss, shapeExtraMisses[f.row.kind]...)
		}
		cs = append(cs, c)
	}
	return cs
}

// TestShapes: every row's fake is masked, under its own kind, in a log line,
// an environment dump, a JSON value and a URL query, whatever the writes'
// sizes; every near miss is left alone, alone and in a log line.
func TestShapes(t *testing.T) {
	p := mustPolicy(t, Options{})
	for _, f := range shapeFakes() {
		t.Run(f.row.kind+"/"+f.kw, func(t *testing.T) {
			if f.row.src == "" || !strings.HasPrefix(f.row.src, "https://") {
				t.Errorf("row %s cites no documentation", f.row.kind)
			}
			surroundings := []string{
				"2024-05-01T12:00:00Z INFO deploy: using %s for upload\n",
				"HOME=/root\nSERVICE_CRED=%s\nPATH=/usr/bin\n",
				`{"service": "deploy", "value": "%s", "n": 1}`,
				"\x1b[32m%s\x1b[0m\n",
			}
			if !strings.Contains(f.token, "://") {
				surroundings = append(surroundings, "GET https://api.example.com/v1/items?code=%s&page=2 HTTP/1.1\r\n")
			}
			for _, s := range surroundings {
				in := strings.Replace(s, "%s", f.token, 1)
				out := checkAllWays(t, p, in, f.secret)
				if strings.Contains(out, f.secret) {
					t.Errorf("secret visible in %q", out)
				}
				if !strings.Contains(out, "[REDACTED:"+f.row.kind+"]") {
					t.Errorf("no %s marker: %q", f.row.kind, out)
				}
				if f.lead != "" && !strings.Contains(out, f.lead) {
					t.Errorf("lead %q not kept: %q", f.lead, out)
				}
			}
			misses := append(append([]string{}, f.miss...), shapeExtraMisses[f.row.kind]...)
			for _, m := range misses {
				for _, in := range []string{m, "INFO using " + m + " for upload\n"} {
					if got := checkAllWays(t, p, in, ""); got != in {
						t.Errorf("near miss %q changed to %q", in, got)
					}
				}
			}
		})
	}
}

// TestShapeRows: the rows are well formed and the catalogue holds them,
// before the context rules (so "token=<shape>" names the shape).
func TestShapeRows(t *testing.T) {
	kinds := map[string]bool{}
	for _, k := range Catalogue() {
		kinds[k] = true
	}
	shapes := 0
	for _, r := range shapeRows {
		if _, err := parseShape(r.shape); err != nil {
			t.Error(err)
		}
		if !kinds[r.kind] {
			t.Errorf("kind %s not in the catalogue", r.kind)
		}
		if r.kind != strings.ToLower(r.kind) || strings.ContainsAny(r.kind, " _") {
			t.Errorf("kind %q: want lower-case provider-kind", r.kind)
		}
		shapes += len(r.keywords)
	}
	pos := map[string]int{}
	for i, e := range fullCatalogue() {
		if _, ok := pos[e.kind]; !ok {
			pos[e.kind] = i
		}
	}
	for _, r := range shapeRows {
		for _, ctx := range []string{"jwt", "bearer-token", "url-password", "password", "secret", "token", "api-key"} {
			if p, ok := pos[ctx]; ok && pos[r.kind] > p {
				t.Errorf("%s comes after %s", r.kind, ctx)
			}
		}
	}
	p := mustPolicy(t, Options{})
	f := shapeFakes()[0]
	in := "token=" + f.token + "\n"
	if out := checkAllWays(t, p, in, f.secret); !strings.Contains(out, "[REDACTED:"+f.row.kind+"]") {
		t.Errorf("assignment named instead of the shape: %q", out)
	}
	t.Logf("%d shape rows, %d keywords", len(shapeRows), shapes)
}

// TestParseShape: the notation's errors are caught.
func TestParseShape(t *testing.T) {
	for _, bad := range []string{"", "abc", "[a-z]", "[a-z]{", "[a-z]{0}", "[a-z]{3,2}", "[a-z]{2,}x[a-z]{3}", "[a-z]{2,5}[0-9]{3}", "[a-z]{2,5}b[0-9]{3}", "[a-z", "x\\"} {
		if _, err := parseShape(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	parts, err := parseShape(`[a-f0-9]{24}\-[A-Z]{2,}`)
	if err != nil || len(parts) != 3 || parts[1].lit != "-" || !parts[2].open || parts[0].max != 24 {
		t.Errorf("parts %+v, %v", parts, err)
	}
}

// FuzzPlantedShape: a planted token of any row never appears in the output,
// whole or as any fragment of 8 bytes or more, whatever surrounds it and
// however the writes are split.
func FuzzPlantedShape(f *testing.F) {
	f.Add([]byte("before "), []byte(" after"), uint16(0), []byte{1})
	f.Add([]byte("x"), []byte("AKIA"), uint16(40), []byte{3, 255})
	f.Add([]byte("tests/test_api.py::test_password PASSED\n"), []byte("E   token=\n"), uint16(77), []byte{100, 200})
	fakes := shapeFakes()
	f.Fuzz(func(t *testing.T, prefix, suffix []byte, which uint16, cuts []byte) {
		fk := fakes[int(which)%len(fakes)]
		before := " " + fk.lead
		if fk.row.afterKw {
			before += fk.kw
		}
		in := string(prefix) + before + fk.secret + "\n" + string(suffix)
		out := stripMarkers(string(redactChunks(t, fuzzPolicy(), []byte(in), chunkSizes(cuts))))
		around := string(prefix) + "\x00" + before + "\x00\n\x00" + string(suffix)
		for n := 8; n <= len(fk.secret); n++ {
			for i := 0; i+n <= len(fk.secret); i++ {
				frag := fk.secret[i : i+n]
				if strings.Contains(out, frag) && !strings.Contains(around, frag) {
					t.Fatalf("fragment %q of %q visible in %q", frag, fk.secret, out)
				}
			}
			if n == 8 {
				n = len(fk.secret) - 1
			}
		}
	})
}

// stripMarkers replaces every marker in s with a NUL byte: a marker's kind
// may spell a fragment of a token ("[REDACTED:rubygems-api-key]").
func stripMarkers(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "[REDACTED:")
		j := -1
		if i >= 0 {
			j = strings.IndexByte(s[i:], ']')
		}
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteByte(0)
		s = s[i+j+1:]
	}
}
