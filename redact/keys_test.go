package redact

import (
	"encoding/base64"
	"strings"
	"testing"
)

// Issue 27, key names and keyed contexts: names that end in "key" with a
// random-looking value, every value of a Kubernetes Secret's data and
// stringData, the credential parameters of Digest-style Authorization
// headers, and the words that merely hold a key word (AuthFail). Every
// value is invented.

type keyCase struct {
	name    string
	in      string
	secrets []string // none of them, nor any 8-byte piece of one, may show
	keep    []string // each must still show (names, hosts, the visible parameters)
}

// checkKeyCase runs c through p every way (see checkAllWays) and checks
// that no piece of a secret shows and that what must stay does.
func checkKeyCase(t *testing.T, p *Policy, c keyCase) {
	t.Helper()
	first := ""
	if len(c.secrets) > 0 {
		first = c.secrets[0]
	}
	out := checkAllWays(t, p, c.in, first)
	for _, s := range c.secrets {
		for k := 0; k+8 <= len(s); k++ {
			if strings.Contains(out, s[k:k+8]) {
				t.Errorf("%s: %q of secret %q shows in %q", c.name, s[k:k+8], s, out)
				break
			}
		}
	}
	for _, k := range c.keep {
		if !strings.Contains(out, k) {
			t.Errorf("%s: %q is gone from %q", c.name, k, out)
		}
	}
}

// checkUnchanged runs each of ins through p every way and checks that it
// comes out as it went in.
func checkUnchanged(t *testing.T, p *Policy, ins []string) {
	t.Helper()
	for _, in := range ins {
		if got := checkAllWays(t, p, in, ""); got != in {
			t.Errorf("%q changed to %q", in, got)
		}
	}
}

// TestKeyNames: a name that ends in the word "key" (license_key, fooKey,
// STRIPE_KEY, a bare Key) with a random-looking value is a secret, in every
// carrier and position.
func TestKeyNames(t *testing.T) {
	p := mustPolicy(t, Options{})
	for _, c := range []keyCase{
		{"snake", "license_key=Zq8v3LmN0pXrT7yK\n", []string{"Zq8v3LmN0pXrT7yK"}, []string{"license_key="}},
		{"camel", "using fooKey=Hq2Lz9Wx7Vr3KtBm for the upload\n", []string{"Hq2Lz9Wx7Vr3KtBm"}, []string{"fooKey=", "for the upload"}},
		{"bare Key, first byte", "Key=Nv8cQ2wZr5LtKx3m", []string{"Nv8cQ2wZr5LtKx3m"}, []string{"Key="}},
		{"env, later line", "HOME=/root\nSTRIPE_KEY=Rk8Vq2Lz7Wx3Tn5M\nPATH=/usr/bin\n", []string{"Rk8Vq2Lz7Wx3Tn5M"}, []string{"PATH=/usr/bin"}},
		{"export, quoted", `export DEPLOY_KEY="Tq7zWm2xLp9RsV4c"` + "\n", []string{"Tq7zWm2xLp9RsV4c"}, []string{"DEPLOY_KEY"}},
		{"yaml", "app:\n  STRIPE_KEY: Wq9zLr3TnX7vKm2P\n  region: eu\n", []string{"Wq9zLr3TnX7vKm2P"}, []string{"region: eu"}},
		{"json", `{"licenseKey": "Lk2Qz8Wx7Vr3Pq9Z", "user": "ci"}`, []string{"Lk2Qz8Wx7Vr3Pq9Z"}, []string{`"user": "ci"`}},
		{"json in json", `{"body":"{\"deployKey\":\"Gx7Kq2Lz9Wr4VmT8\"}"}`, []string{"Gx7Kq2Lz9Wr4VmT8"}, nil},
		{"xml", "<config><licenseKey>Fq2Lw9zRt7Vx3Kp8</licenseKey></config>\n", []string{"Fq2Lw9zRt7Vx3Kp8"}, []string{"</licenseKey>"}},
		{"kebab flag", "+ ./install --license-key Pq3Zx8Lm2Wv7Rt9K --yes\n", []string{"Pq3Zx8Lm2Wv7Rt9K"}, []string{"--yes"}},
		{"url query", "GET /v1/maps?key=Zx7Qm2Lp9Wv3Rt8K&zoom=3 HTTP/1.1\n", []string{"Zx7Qm2Lp9Wv3Rt8K"}, []string{"zoom=3"}},
		{"spaces around =", `aws_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"` + "\n", []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}, nil},
		{"hex", "license_key=3f9a7c2e1b4d8f6a0c5e9b2d7a4f1c8e\n", []string{"3f9a7c2e1b4d8f6a0c5e9b2d7a4f1c8e"}, nil},
		{"after colour", "\x1b[1mKey=Vb4Nm8Qz2Lx7Rt3W\x1b[0m\n", []string{"Vb4Nm8Qz2Lx7Rt3W"}, []string{"\x1b[0m"}},
		{"TOML", "[service]\nsigning_secret_key = 'Mz3Qx8Lv2Wr7Tk9P'\n", []string{"Mz3Qx8Lv2Wr7Tk9P"}, nil},
	} {
		checkKeyCase(t, p, c)
	}
	keyNameNearMisses(t, p)
}

// keyNameNearMisses: "key" names whose values are no secrets, words that
// merely hold "key", and keys that are no credentials stay as they are.
func keyNameNearMisses(t *testing.T, p *Policy) {
	t.Helper()
	checkUnchanged(t, p, []string{
		"sort_key=created_at\n",
		"primaryKey: id\n",
		"cache_key=users:42:profile\n",
		"keyboard=Zq8v3LmN0pXrT7yK\n",
		"monkey=Hq2Lz9Wx7Vr3KtBm\n",
		"hotkey=Nv8cQ2wZr5LtKx3m\n",
		"public_key=Rk8Vq2Lz7Wx3Tn5M\n",
		`{"publicKey": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE"}` + "\n",
		`{"Key": "logs/2024-01-05/app-0001.log", "Size": 1024}` + "\n",
		"gpg: key 7F3A9B2C1D4E5F60: public key \"Alice <alice@example.com>\" imported\n",
		"+ apt-key adv --keyserver keyserver.ubuntu.com --recv-key 7F3A9B2C1D4E5F60\n",
		"ERROR 1062 (23000): Duplicate entry '42' for key 'PRIMARY'\n",
		"\tkey = parser.next()\n",
		"\tkey := os.Getenv(\"LICENSE\")\n",
		"  id BIGINT NOT NULL, PRIMARY KEY (id)\n",
		"wpa_supplicant[812]: wlan0: WPA: Key negotiation completed with 00:11:22:33:44:55 [PTK=CCMP GTK=CCMP]\n",
		"      - key: node-role.kubernetes.io/control-plane\n        operator: Exists\n",
		"ECDSA key fingerprint is SHA256:Xb3kQ9zLx2Wm7Rt4VbNc8Pq1Ls5Df6Gh0Jk.\n",
		"redis> GET key:session:42\n",
		"  sort_key: created_at_desc_v2\n",
	})
}

// TestK8sSecretData: every value of a Secret's data map (base64, under a
// key of any name) and of its stringData map, as kubectl prints them in
// YAML and JSON, is masked; the key names, kind and metadata stay.
func TestK8sSecretData(t *testing.T) {
	p := mustPolicy(t, Options{})
	cert := "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJJakFOQmdrcWhraUc5dzBCQVFFRkFBT0NBUThBTUlJQkNnS0NBUUVBCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
	for _, c := range []keyCase{
		{"get -o yaml", "apiVersion: v1\ndata:\n  anything: c2VjcmV0cGFzcw==\n  tls.crt: " + cert + "\nkind: Secret\nmetadata:\n  name: web-tls\ntype: kubernetes.io/tls\n",
			[]string{"c2VjcmV0cGFzcw==", cert}, []string{"anything: ", "tls.crt: ", "kind: Secret", "name: web-tls"}},
		{"first line", "data:\n  db-user: YWRtaW4=\n  db-conn: cG9zdGdyZXM6Ly9hcHBAZGI6NTQzMi94\nkind: Secret\n",
			[]string{"YWRtaW4=", "cG9zdGdyZXM6Ly9hcHBAZGI6NTQzMi94"}, []string{"db-user: ", "db-conn: ", "kind: Secret"}},
		{"in a List", "apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    api.txt: WnE4djNMbU4wcFhyVDd5Sw==\n  kind: Secret\n- apiVersion: v1\n  kind: Secret\n",
			[]string{"WnE4djNMbU4wcFhyVDd5Sw=="}, []string{"api.txt: ", "  kind: Secret"}},
		{"CRLF", "data:\r\n  secret.txt: aHVudGVyMg==\r\n  other: Zm9vYmFyYmF6\r\nkind: Secret\r\n",
			[]string{"aHVudGVyMg==", "Zm9vYmFyYmF6"}, []string{"other: ", "kind: Secret"}},
		{"get -o json", "{\n    \"apiVersion\": \"v1\",\n    \"data\": {\n        \"token\": \"c2VjcmV0\",\n        \"username\": \"YWRtaW4=\"\n    },\n    \"kind\": \"Secret\"\n}\n",
			[]string{"c2VjcmV0", "YWRtaW4="}, []string{`"username": "`, `"kind": "Secret"`}},
		{"json one line", `{"apiVersion":"v1","data":{"a":"aHVudGVyMg==","b":"Zm9vYmFyYmF6"},"kind":"Secret"}`,
			[]string{"aHVudGVyMg==", "Zm9vYmFyYmF6"}, []string{`"kind":"Secret"`}},
		{"stringData", "kind: Secret\nstringData:\n  user: app\n  conn: hunter2-x\n  config.yaml: |\n    dbpass: Qm8zLx2Wv7Rt\n    host: db\nmetadata:\n  name: app\n",
			[]string{"hunter2-x", "Qm8zLx2Wv7Rt"}, []string{"conn: ", "config.yaml: |", "name: app"}},
		{"last-applied annotation", `        "kubectl.kubernetes.io/last-applied-configuration": "{\"apiVersion\":\"v1\",\"data\":{\"pin\":\"MTIz\",\"pw\":\"aHVudGVyMg==\"},\"kind\":\"Secret\"}\n"` + "\n",
			[]string{"aHVudGVyMg=="}, []string{`\"pin\":\"`, `\"kind\":\"Secret\"}\n"`}},
		{"stringData json", `{"kind":"Secret","stringData":{"pw":"Tr0ub4dor&3"}}`, []string{"Tr0ub4dor&3"}, []string{`"pw":"`}},
	} {
		checkKeyCase(t, p, c)
	}
	// A map longer than the detector's window (k8sWindow): the value it
	// cuts is masked to its end as it arrives.
	a := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("first-secret-text ", 120)))
	b := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("second-secret-txt ", 120)))
	checkKeyCase(t, p, keyCase{"past the window", "data:\n  a: " + a + "\n  b: " + b + "\nkind: Secret\n",
		[]string{a, b}, []string{"  a: ", "  b: ", "\nkind: Secret\n"}})
	k8sNearMisses(t, p)
}

// k8sNearMisses: a ConfigMap's data (text, not base64 of text), a list
// under data:, server-sent events and a JSON "data" object of other values
// stay.
func k8sNearMisses(t *testing.T, p *Policy) {
	t.Helper()
	checkUnchanged(t, p, []string{
		"apiVersion: v1\ndata:\n  log_level: info\n  database: postgres\n  tz: Europe/Paris\n  enabled: \"true\"\n  replicas: \"3\"\nkind: ConfigMap\n",
		"data:\n  nginx.conf: |\n    server {\n      listen 80;\n    }\nkind: ConfigMap\n",
		"data:\n- 1\n- 2\n",
		"data: {\"id\": 42, \"event\": \"ping\"}\n\n",
		`{"data": {"id": "1234", "name": "test", "state": "open"}}` + "\n",
		"metadata:\n  data:\n  labels:\n    app: web\n",
	})
}

// TestAuthParams: in Digest, AWS4-HMAC-SHA256 and OAuth credentials, the
// parameters that are credentials (response, Signature, oauth_signature,
// oauth_token) are masked; username, realm, uri and the others stay.
func TestAuthParams(t *testing.T) {
	p := mustPolicy(t, Options{})
	for _, c := range []keyCase{
		{"digest", `Authorization: Digest username="bob", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/dir/index.html", qop=auth, nc=00000001, cnonce="0a4f113b", response="6629fae49393a05397450978507c4ef1", opaque="5ccc069c403ebaf9f0171e9517f40e41"` + "\n",
			[]string{"6629fae49393a05397450978507c4ef1"}, []string{`username="bob"`, `realm="testrealm@host.com"`, `uri="/dir/index.html"`, `opaque="5ccc069c403ebaf9f0171e9517f40e41"`}},
		{"curl -v", "> GET /dir/index.html HTTP/1.1\r\n> Authorization: Digest username=\"al\", realm=\"x\", nonce=\"abc\", uri=\"/dir/index.html\", response=\"9f3a6c1e2b7d4a5f8c0e1d2b3a4f5c6e\"\r\n> Host: example.com\r\n",
			[]string{"9f3a6c1e2b7d4a5f8c0e1d2b3a4f5c6e"}, []string{`username="al"`, `uri="/dir/index.html"`, "> Host: example.com"}},
		{"proxy, unquoted, first", `Proxy-Authorization: Digest response=7c4ef16629fae49393a0539745097850, username="al", qop=auth`,
			[]string{"7c4ef16629fae49393a0539745097850"}, []string{`username="al"`, "qop=auth"}},
		{"lower case in json", `{"headers": {"authorization": "Digest username=\"bob\", realm=\"x\", response=\"1e2b7d4a5f8c0e1d9f3a6c2b3a4f5c6e\", uri=\"/a\""}}`,
			[]string{"1e2b7d4a5f8c0e1d9f3a6c2b3a4f5c6e"}, []string{`username=\"bob\"`, `uri=\"/a\"`}},
		{"sigv4", "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7\n",
			[]string{"5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"}, []string{"SignedHeaders=content-type;host;x-amz-date"}},
		{"oauth1", `Authorization: OAuth oauth_nonce="kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", oauth_signature="tnnArxj06cWHq44gCs1OSKk%2FjY%3D", oauth_signature_method="HMAC-SHA1", oauth_token="370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb", oauth_version="1.0"` + "\n",
			[]string{"tnnArxj06cWHq44gCs1OSKk", "GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb"}, []string{`oauth_signature_method="HMAC-SHA1"`, `oauth_version="1.0"`}},
		{"basic stays whole", "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==\n", []string{"dXNlcjpwYXNzd29yZDEyMw=="}, nil},
	} {
		checkKeyCase(t, p, c)
	}
}

// TestKeyWordInsideWords: a word that merely holds a key word (AuthFail,
// SessionClosed, TokenExpired, PassThrough) is no key, and a chain of
// short colon-separated codes is no value; lines of real system logs stay.
// The key words themselves are still keys.
func TestKeyWordInsideWords(t *testing.T) {
	p := mustPolicy(t, Options{})
	checkUnchanged(t, p, []string{
		"wifi: AuthFail:sts:5_rsn:0 reason=2\n",
		"Dec  2 08:00:01 mac kernel[0]: wl0: Auth: AuthFail:sts:5_rsn:0x0 reason 2\n",
		"airportd[123]: -[CWXPCSubsystem handleLinkEvent] AuthFail:sts:15_rsn:0x0003_auth:shared\n",
		"sshd[2211]: Failed password for invalid user admin from 203.0.113.5 port 51234 ssh2\n",
		"sshd[2211]: pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=203.0.113.5  user=root\n",
		"sudo: pam_unix(sudo:session): session opened for user root(uid=0) by alice(uid=1000)\n",
		"wpa_supplicant[812]: wlan0: CTRL-EVENT-SSID-TEMP-DISABLED id=0 ssid=\"home\" auth_failures=1 duration=10 reason=WRONG_KEY\n",
		"kernel: wlp2s0: send auth to 00:11:22:33:44:55 (try 1/3)\n",
		"systemd-logind[601]: New session 42 of user alice.\n",
		"SessionClosed: Vb4Nm8Qz2Lx7Rt3W\n",
		"TokenExpired: Tq7zWm2xLp9RsV4c\n",
		"AuthError:code:401_reason:bad_sig\n",
		"PassThrough: enabled\n",
		"TokenizerError: unexpected EOF at 3:14\n",
		`{"authStatus": "Hq2Lz9Wx7Vr3KtBm"}` + "\n",
		"Warning  FailedMount  12s  kubelet  MountVolume.SetUp failed for volume \"db-creds\" : secret \"db-creds\" not found\n",
		`10.0.0.1 - - [02/Dec/2026:08:00:01 +0000] "GET /auth/callback?state=af0ifjsldkj HTTP/1.1" 302 0` + "\n",
	})
	for _, c := range []keyCase{
		{"authToken", "authToken=Wq9zLr3TnX7vKm2P\n", []string{"Wq9zLr3TnX7vKm2P"}, nil},
		{"sessionID", "sessionID=Lk2Qz8Wx7Vr3abcdefgh\n", []string{"Lk2Qz8Wx7Vr3abcdefgh"}, nil},
		{"auth", "auth: Zq8v3LmN0pXrT7yK\n", []string{"Zq8v3LmN0pXrT7yK"}, nil},
		{"authKey json", `{"authKey": "Hq2Lz9Wx7Vr3KtBm"}`, []string{"Hq2Lz9Wx7Vr3KtBm"}, nil},
		{"credsJson", "credsJson=Nv8cQ2wZr5LtKx3mPq\n", []string{"Nv8cQ2wZr5LtKx3mPq"}, nil},
	} {
		checkKeyCase(t, p, c)
	}
}
