package redact

import (
	"encoding/base64"
	"math/rand"
	"strings"
	"testing"
)

// The provider token shapes, test-mode secret keys and sources of issue 27:
// each class with fakes of its own (invented, seeded: never real
// credentials), in the places output puts them, and the near misses that
// must stay as they are.

// fakeRun returns n bytes of alphabet, the same for the same seed.
func fakeRun(alphabet string, n int, seed int64) string {
	r := rand.New(rand.NewSource(seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.Intn(len(alphabet))]
	}
	return string(b)
}

const (
	fkAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	fkUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	fkHex   = "0123456789abcdef"
	fkB64U  = fkAlnum + "_-"
)

// fakeUUID is a version-4-looking UUID of seed.
func fakeUUID(seed int64) string {
	h := fakeRun(fkHex, 32, seed)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

// fakeJWT is a JWT of three base64url parts whose header starts with hdr.
func fakeJWT(hdr string, seed int64) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(hdr)) + "." + enc([]byte(`{"sub":"svc-deploy","iat":1714550400,"exp":1714636800}`)) + "." + fakeRun(fkB64U, 43, seed)
}

// providerCase is one token of a class: token is printed whole; secret
// (token when empty) is the part that must not be seen, and lead the part
// before it that must stay.
type providerCase struct {
	kind   string
	token  string
	secret string
	lead   string
}

func providerCases() []providerCase {
	std := base64.StdEncoding.EncodeToString
	jwtAlg := fakeJWT(`{"alg":"RS256","kid":"k1"}`, 11)
	jwtTyp := fakeJWT(`{"typ":"JWT","alg":"HS256"}`, 12)
	bedrockURL := "bedrock.amazonaws.com/?Action=CallWithBearerToken&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=ASIA" +
		fakeRun("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 21) + "%2F20250701%2Fus-east-1%2Fbedrock%2Faws4_request&X-Amz-Date=20250701T120000Z&X-Amz-Expires=43200&X-Amz-Security-Token=" +
		fakeRun(fkAlnum, 300, 22) + "&X-Amz-Signature=" + fakeRun(fkHex, 64, 23) + "&Version=1"
	authressLead := "sc_" + fakeRun("abcdefghijklmnopqrstuvwxyz0123456789", 12, 31) + "." + fakeRun("abcdefghijklmnopqrstuvwxyz0123456789", 4, 32)
	authressRest := ".acc_" + fakeRun("abcdefghijklmnopqrstuvwxyz0123456789", 12, 33) + "." + "MC4CAQAwBQYDK2VwBCIEI" + fakeRun(fkAlnum+"+/", 43, 34)
	return []providerCase{
		// SettleMint: personal, application and service access tokens.
		{kind: "settlemint-token", token: "sm_pat_" + fakeRun(fkAlnum, 16, 1)},
		{kind: "settlemint-token", token: "sm_aat_" + fakeRun(fkAlnum, 16, 2)},
		{kind: "settlemint-token", token: "sm_sat_" + fakeRun(fkAlnum, 24, 3)},
		// A JWT in base64 once more, padded or not.
		{kind: "jwt-base64", token: std([]byte(jwtAlg))},
		{kind: "jwt-base64", token: std([]byte(jwtTyp + "x"))},
		{kind: "jwt-base64", token: strings.TrimRight(std([]byte(jwtAlg+"yz")), "=")},
		// Amazon Bedrock API keys, long- and short-term.
		{kind: "aws-bedrock-api-key", token: "ABSK" + std([]byte("BedrockAPIKey-"+fakeRun("abcdefghijklmnopqrstuvwxyz0123456789", 8, 24)+"-at-123456789012:"+fakeRun(fkAlnum+"+/", 60, 25)))},
		{kind: "aws-bedrock-api-key", token: "bedrock-api-key-" + std([]byte(bedrockURL))},
		// 1Password Secret Keys, both groupings.
		{kind: "onepassword-secret-key", token: "A3-" + fakeRun(fkUpper, 6, 41) + "-" + fakeRun(fkUpper, 11, 42) + "-" + fakeRun(fkUpper, 5, 43) + "-" + fakeRun(fkUpper, 5, 44) + "-" + fakeRun(fkUpper, 5, 45)},
		{kind: "onepassword-secret-key", token: "A3-" + fakeRun(fkUpper, 6, 46) + "-" + fakeRun(fkUpper, 6, 47) + "-" + fakeRun(fkUpper, 5, 48) + "-" + fakeRun(fkUpper, 5, 49) + "-" + fakeRun(fkUpper, 5, 50) + "-" + fakeRun(fkUpper, 5, 51)},
		// Facebook/Meta access tokens: user, page, app.
		{kind: "facebook-access-token", token: "EAAB" + fakeRun(fkAlnum, 180, 52)},
		{kind: "facebook-access-token", token: "EAAG" + fakeRun(fkAlnum, 120, 53)},
		{kind: "facebook-access-token", token: "EAAM" + fakeRun(fkAlnum, 220, 54)},
		// Airtable personal access tokens.
		{kind: "airtable-token", token: "pat" + fakeRun(fkAlnum, 14, 61) + "." + fakeRun(fkHex, 64, 62)},
		// Adobe client secrets.
		{kind: "adobe-client-secret", token: "p8e-" + fakeRun(fkAlnum, 32, 63)},
		{kind: "adobe-client-secret", token: "p8e-" + fakeRun(fkAlnum, 13, 68) + "-" + fakeRun(fkAlnum, 8, 69) + "_" + fakeRun(fkAlnum, 9, 70)},
		// Authress service client access keys: the ids before ".acc" stay.
		{kind: "authress-access-key", token: authressLead + authressRest, secret: authressRest[1:], lead: authressLead},
		// Grafana's legacy API keys.
		{kind: "grafana-api-key", token: std([]byte(`{"k":"` + fakeRun(fkAlnum, 32, 64) + `","n":"deploy-bot","id":1}`))},
		{kind: "grafana-api-key", token: std([]byte(`{"k":"` + fakeRun(fkAlnum, 32, 65) + `","n":"ci","id":42}`))},
		// 42 Intra application secrets.
		{kind: "intra42-client-secret", token: "s-s4t2ud-" + fakeRun(fkHex, 64, 66)},
		{kind: "intra42-client-secret", token: "s-s4t2af-" + fakeRun(fkHex, 64, 67)},

		// Test-mode secret keys.
		{kind: "stripe-test-secret-key", token: "sk_test_" + fakeRun(fkAlnum, 24, 71)},
		{kind: "stripe-test-secret-key", token: "sk_test_51" + fakeRun(fkAlnum, 97, 72)},
		{kind: "stripe-test-secret-key", token: "rk_test_" + fakeRun(fkAlnum, 99, 73)},
		{kind: "flutterwave-test-secret-key", token: "FLWSECK_TEST-" + fakeRun(fkHex, 32, 74) + "-X", secret: "FLWSECK_TEST-" + fakeRun(fkHex, 32, 74)},
		{kind: "duffel-test-token", token: "duffel_test_" + fakeRun(fkB64U, 43, 75)},
		{kind: "shippo-test-token", token: "shippo_test_" + fakeRun(fkHex, 40, 76)},
		{kind: "easypost-test-api-key", token: "EZTK" + fakeRun(fkAlnum, 54, 77)},
		{kind: "braintree-access-token", token: "access_token$sandbox$" + fakeRun("abcdefghijklmnopqrstuvwxyz0123456789", 16, 79) + "$" + fakeRun(fkHex, 32, 80),
			secret: "$sandbox$" + fakeRun("abcdefghijklmnopqrstuvwxyz0123456789", 16, 79) + "$" + fakeRun(fkHex, 32, 80), lead: "access_token"},
		{kind: "square-application-secret", token: "sandbox-sq0csp-" + fakeRun(fkB64U, 43, 81), secret: "sq0csp-" + fakeRun(fkB64U, 43, 81), lead: "sandbox-"},
		{kind: "square-access-token", token: "sandbox-sq0atb-" + fakeRun(fkB64U, 22, 82), secret: "sq0atb-" + fakeRun(fkB64U, 22, 82), lead: "sandbox-"},
		{kind: "plaid-access-token", token: "access-sandbox-" + fakeUUID(83)},
		{kind: "plaid-access-token", token: "access-production-" + fakeUUID(84)},
		{kind: "paddle-api-key", token: "pdl_sdbx_apikey_01" + fakeRun("0123456789abcdefghjkmnpqrstvwxyz", 24, 85) + "_" + fakeRun(fkAlnum, 22, 86) + "_" + fakeRun(fkAlnum, 3, 87)},

		// Other documented prefixes the catalogue lacked.
		{kind: "harness-api-key", token: "pat." + fakeRun(fkB64U, 22, 91) + "." + fakeRun(fkAlnum, 24, 92) + "." + fakeRun(fkAlnum, 20, 93)},
		{kind: "openshift-user-token", token: "sha256~" + fakeRun(fkB64U, 43, 94)},
		{kind: "hubspot-access-token", token: "pat-na1-" + fakeUUID(95)},
		{kind: "posthog-personal-api-key", token: "phx_" + fakeRun(fkAlnum, 47, 96)},
		{kind: "nuget-api-key", token: "oy2" + fakeRun("abcdefghijklmnopqrstuvwxyz234567", 43, 97)},
		{kind: "aws-access-key-id", token: "ABIA" + fakeRun("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 98)},
		{kind: "aws-access-key-id", token: "ACCA" + fakeRun("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 99)},
	}
}

// providerPlaces are where output puts a token: alone on the first line,
// on a later line, quoted, in JSON, after a colour code, in a URL query, in
// YAML, as a flag's argument, in a CSV row.
var providerPlaces = []string{
	"%s\n",
	"starting deploy\nusing %s\ndone\n",
	"export DEPLOY_CRED='%s'\n",
	`{"service":"deploy","value":"%s","n":1}` + "\n",
	"\x1b[1;33m%s\x1b[0m\n",
	"GET https://api.example.com/v1/items?code=%s&page=2 HTTP/1.1\r\n",
	"config:\n  value: %s\n  region: us-east-1\n",
	"deploy --cred %s --region us-east-1\n",
	"2024-05-01,%s,ok\n",
}

// TestProviderTokens: every token of issue 27's classes is masked under its
// kind wherever output puts it, with no fragment of 8 bytes or more of it
// left, and the lead the format keeps (ids, "sandbox-") still there.
func TestProviderTokens(t *testing.T) {
	p := mustPolicy(t, Options{})
	for _, c := range providerCases() {
		secret := c.secret
		if secret == "" {
			secret = c.token
		}
		t.Run(c.kind+"/"+c.token[:min(12, len(c.token))], func(t *testing.T) {
			for _, place := range providerPlaces {
				in := strings.Replace(place, "%s", c.token, 1)
				out := checkAllWays(t, p, in, secret)
				if !strings.Contains(out, "[REDACTED:"+c.kind+"]") {
					t.Errorf("no %s marker in %q", c.kind, out)
				}
				bare := stripMarkers(out)
				for i := 0; i+8 <= len(secret); i++ {
					if frag := secret[i : i+8]; strings.Contains(bare, frag) && !strings.Contains(place, frag) {
						t.Errorf("fragment %q of the value visible in %q", frag, out)
						break
					}
				}
				if c.lead != "" && !strings.Contains(out, c.lead) {
					t.Errorf("lead %q swallowed: %q", c.lead, out)
				}
				for _, keep := range []string{"https://api.example.com/v1/items?code=", "&page=2", "us-east-1", "starting deploy", "2024-05-01,"} {
					if strings.Contains(in, keep) && !strings.Contains(out, keep) {
						t.Errorf("%q swallowed: %q", keep, out)
					}
				}
			}
		})
	}
}

// providerMisses are near misses of the classes: publishable and public
// ids, wrong lengths and alphabets, words and paths that share a prefix,
// git hashes, UUIDs, digests.
func providerMisses() []string {
	std := base64.StdEncoding.EncodeToString
	return []string{
		// Publishable keys and public ids stay.
		"pk_test_" + fakeRun(fkAlnum, 24, 101),
		"pk_live_" + fakeRun(fkAlnum, 99, 102),
		"FLWPUBK_TEST-" + fakeRun(fkHex, 32, 103) + "-X",
		"test_pub_" + fakeRun(fkHex, 35, 104),
		"phc_" + fakeRun(fkAlnum, 43, 105),
		"u-s4t2ud-" + fakeRun(fkHex, 64, 106),
		"rzp_test_" + fakeRun(fkAlnum, 14, 107),
		// Test names, paths and words with a keyword in them.
		"tests/test_api.py::test_login PASSED",
		"sk_test_short",
		"path/to/file.go:12: pattern matched",
		"patch-2024-05-01.diff",
		"pat" + fakeRun(fkAlnum, 14, 111) + "." + fakeRun(fkHex, 63, 112),
		"compat" + fakeRun(fkAlnum, 14, 113) + "." + fakeRun(fkHex, 64, 114),
		"pat.example.com",
		"pat-na1-" + fakeRun(fkHex, 32, 115),
		"sha256:" + fakeRun(fkHex, 64, 116),
		"sha256~short",
		"A3-PAPER-SIZE",
		"A3-" + fakeRun(fkUpper, 6, 117) + "-" + fakeRun(fkUpper, 6, 118),
		"a3-" + strings.ToLower(fakeRun(fkUpper, 6, 119)+"-"+fakeRun(fkUpper, 11, 120)+"-"+fakeRun(fkUpper, 5, 121)+"-"+fakeRun(fkUpper, 5, 122)+"-"+fakeRun(fkUpper, 5, 123)),
		"EAAB" + fakeRun(fkAlnum, 60, 124),
		"TEAAM" + fakeRun(fkAlnum, 150, 125),
		"ZXlKaGVsbG8=",
		"ABSKILLS unlocked",
		"ABSK" + fakeRun(fkAlnum, 40, 126),
		"bedrock-api-key-name: my-key",
		"eyJrIjoi" + fakeRun(fkAlnum, 20, 127),
		"s-s4t2ud-" + fakeRun(fkHex, 63, 128),
		"sm_pat_" + fakeRun(fkAlnum, 15, 129),
		"p8e-" + fakeRun(fkAlnum, 31, 130),
		`Metadata.Key.of("p8e-client-version")`,
		"foo.acc_bar.baz",
		"access-sandbox-" + fakeRun(fkHex, 12, 131),
		"link-sandbox-" + fakeUUID(132),
		"phx_short",
		"oy2" + fakeRun("abcdefghijklmnopqrstuvwxyz0189", 43, 133),
		"ACCA" + fakeRun("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 15, 136),
		"ACCOUNTING ABIAS",
		// Ordinary identifiers.
		fakeRun(fkHex, 40, 134),
		fakeUUID(135),
		std([]byte("just some text that is not a token at all, no")),
	}
}

// TestProviderNearMisses: the near misses pass unchanged, alone and in a
// log line.
func TestProviderNearMisses(t *testing.T) {
	p := mustPolicy(t, Options{})
	for _, m := range providerMisses() {
		for _, in := range []string{m, "2024-05-01T12:00:00Z INFO using " + m + " for upload\n", `{"value":"` + m + `"}`} {
			if got := checkAllWays(t, p, in, ""); got != in {
				t.Errorf("near miss %q changed to %q", in, got)
			}
		}
	}
}

// TestProviderSources: every row cites a source, and the rows issue 27 found
// weakly sourced cite the provider's own page or code (or are gone).
func TestProviderSources(t *testing.T) {
	want := map[string]string{
		"azure-ad-client-secret": "learn.microsoft.com/en-us/purview/",
		"nuget-api-key":          "github.com/NuGet/NuGetGallery/",
		"terraform-cloud-token":  "developer.hashicorp.com/terraform/cli/config/",
		"bitbucket-app-password": "community.atlassian.com/",
		"atlassian-access-token": "community.atlassian.com/",
	}
	for _, r := range shapeRows {
		if !strings.HasPrefix(r.src, "https://") {
			t.Errorf("%s cites no source", r.kind)
		}
		if w, ok := want[r.kind]; ok && !strings.Contains(r.src, w) {
			t.Errorf("%s cites %s, want the provider's %s", r.kind, r.src, w)
		}
		for _, k := range r.keywords {
			if strings.Contains(r.shape, "T3BlbkFJ") || k == "sk-" {
				t.Errorf("%s: OpenAI's legacy format has no source; the row was to go", r.kind)
			}
		}
	}
}

func init() {
	// The rows' own near misses and leads for TestShapes (shapes_test.go).
	shapeLeads["authress-access-key"] = "sc_k2n4p6r8t0.x1y2"
	for kind, m := range map[string][]string{
		"stripe-test-secret-key":      {"pk_test_" + fakeRun(fkAlnum, 24, 141)},
		"flutterwave-test-secret-key": {"FLWPUBK_TEST-" + fakeRun(fkHex, 32, 142) + "-X"},
		"posthog-personal-api-key":    {"phc_" + fakeRun(fkAlnum, 43, 144)},
		"intra42-client-secret":       {"u-s4t2ud-" + fakeRun(fkHex, 64, 145)},
		"airtable-token":              {"path/to/file.go", "patch-2024-05-01.diff"},
		"harness-api-key":             {"pat.example.com"},
		"openshift-user-token":        {"sha256:" + fakeRun(fkHex, 64, 146)},
		"onepassword-secret-key":      {"A3-PAPER-SIZE"},
		"facebook-access-token":       {"EAAB" + fakeRun(fkAlnum, 60, 147)},
	} {
		shapeExtraMisses[kind] = append(shapeExtraMisses[kind], m...)
	}
}
