package redact

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// The classes of input of ../shared/redact-cases.md (SPEC §6), each with a
// few realistic carriers. Every value is invented.

type classCase struct {
	class   string
	in      string
	secrets []string // none of them, nor any 8-byte piece, may show
}

func classCases() []classCase {
	return []classCase{
		// Repeats: the value again, without its key.
		{"repeat", "config token=Zq8v3LmN0pXr7TsW2yBd9KcF\nuploading with Zq8v3LmN0pXr7TsW2yBd9KcF now\n", []string{"Zq8v3LmN0pXr7TsW2yBd9KcF"}},
		{"repeat", `{"password": "Hx7kP2qLm9zRt4Wv"}` + "\nlogin as ci/Hx7kP2qLm9zRt4Wv failed\n", []string{"Hx7kP2qLm9zRt4Wv"}},
		{"repeat", "DATABASE_URL=postgres://app:S3cr3tP4ssw0rd@db:5432/x\npsql: password S3cr3tP4ssw0rd rejected\n", []string{"S3cr3tP4ssw0rd"}},
		// JSON inside JSON, any depth.
		{"escaped-json", `{"body": "{\"password\": \"Hx7kP2qLm9zRt4Wv\", \"user\": \"ci\"}"}`, []string{"Hx7kP2qLm9zRt4Wv"}},
		{"escaped-json", `{"payload":"{\"client_secret\":\"Gq4Rz8Lm2Xw7Vt9Kp3Nb\"}"}`, []string{"Gq4Rz8Lm2Xw7Vt9Kp3Nb"}},
		{"escaped-json", `"{\\\"api_key\\\":\\\"Wm3Qz8Lr2Tx7Vk9P\\\"}"`, []string{"Wm3Qz8Lr2Tx7Vk9P"}},
		{"escaped-json", `log: "{\"headers\":{\"Authorization\":\"Bearer Lq9zXw2Rt7Vm4Kp8Jc3N\"}}"`, []string{"Lq9zXw2Rt7Vm4Kp8Jc3N"}},
		// Other serializers' escapes.
		{"json-escapes", `{"url":"https://api.example.com/v1?access_token\u003dQm9vTjR5ZkV3cUx4YTJiNw"}`, []string{"Qm9vTjR5ZkV3cUx4YTJiNw"}},
		{"json-escapes", `{"dsn":"postgres:\/\/app:Vq3xT9mLw2Pz8Kd4@db.example.com\/prod"}`, []string{"Vq3xT9mLw2Pz8Kd4"}},
		{"json-escapes", `{\u0022token\u0022:\u0022Tz8Kq2Lm9Xw4Vr7N\u0022}`, []string{"Tz8Kq2Lm9Xw4Vr7N"}},
		// A backslash escape inside a quoted value, and a split right after
		// the backslash (checkAllWays splits everywhere).
		{"quoted-escape", `db_password = "Xk9mP2\"vL8qR4tW7"` + "\n", []string{"Xk9mP2\\\"vL8qR4tW7"}},
		// Go-printed maps and structs.
		{"go-map", "request headers: map[Accept:[*/*] Authorization:[Basic ZGVwbG95OlBhc3N3MHJkSGVyZTEyMw==]]\n", []string{"ZGVwbG95OlBhc3N3MHJkSGVyZTEyMw=="}},
		{"go-map", "cfg: {User:ci Password:Rq8zL2xW9vT4 Host:db}\n", []string{"Rq8zL2xW9vT4"}},
		{"go-map", "map[password:[Kx7Lq2Wz9Rt4Vm] user:[ci]]\n", []string{"Kx7Lq2Wz9Rt4Vm"}},
		// Command-line flags.
		{"cli", "+ curl -fsS -u deploy:Wq9zLr3TnX7vKm2P https://artifacts.example.com/upload\n", []string{"Wq9zLr3TnX7vKm2P"}},
		{"cli", "curl --user 'deploy:Wq9zLr3TnX7vKm2P' https://x\n", []string{"Wq9zLr3TnX7vKm2P"}},
		{"cli", "+ mysql -uroot -pTq7zWm2xLp9RsV4c -h db.internal -e 'select 1'\n", []string{"Tq7zWm2xLp9RsV4c"}},
		{"cli", "mysqldump --password=Tq7zWm2xLp9RsV4c app\n", []string{"Tq7zWm2xLp9RsV4c"}},
		{"cli", "+ docker login -u bot -p Nv8cQ2wZr5LtKx3m registry.example.com\n", []string{"Nv8cQ2wZr5LtKx3m"}},
		{"cli", "docker login --username bot --password Nv8cQ2wZr5LtKx3m ghcr.io\n", []string{"Nv8cQ2wZr5LtKx3m"}},
		{"cli", "redis-cli -h cache -a Rk8Vq2Lz7Wx3Tn5M ping\n", []string{"Rk8Vq2Lz7Wx3Tn5M"}},
		{"cli", "sshpass -p Hq2Lz9Wx7Vr3Kt ssh deploy@host\n", []string{"Hq2Lz9Wx7Vr3Kt"}},
		{"cli", "keytool -importkeystore -srcstorepass Lk2Qz8Wx7Vr3 -deststorepass Lk2Qz8Wx7Vr3\n", []string{"Lk2Qz8Wx7Vr3"}},
		// .netrc.
		{"netrc", "machine api.example.com login bot password Kd9vW2qLz7RxPn4t\n", []string{"Kd9vW2qLz7RxPn4t"}},
		{"netrc", "machine git.example.com\n\tlogin ci\n\tpassword Kd9vW2qLz7RxPn4t\n", []string{"Kd9vW2qLz7RxPn4t"}},
		// XML.
		{"xml", "<server><id>releases</id><username>ci</username><password>Rz8qL2vWn5TkMx7c</password></server>\n", []string{"Rz8qL2vWn5TkMx7c"}},
		{"xml", "<settings><paymentApiKey>Fq2Lw9zRt7Vx3Kp8Jm5n</paymentApiKey></settings>\n", []string{"Fq2Lw9zRt7Vx3Kp8Jm5n"}},
		{"xml", `<datasource user="app" password="Wz2Lq8Rx7Tv3" url="jdbc:x"/>`, []string{"Wz2Lq8Rx7Tv3"}},
		{"xml", `<add key="StoragePassword" value="Gx7Kq2Lz9Wr4Vm"/>`, []string{"Gx7Kq2Lz9Wr4Vm"}},
		// Colour: the letter that ends an ANSI control sequence does not glue.
		{"ansi", "\x1b[31mAKIAQ7ZPLXW3RTYU4BNM\x1b[0m\n", []string{"AKIAQ7ZPLXW3RTYU4BNM"}},
		{"ansi", "\x1b[38;5;196mghp_aB3dE5gH7jaB3dE5gH7jaB3dE5gH7jK9mN0p\x1b[m\n", []string{"ghp_aB3dE5gH7jaB3dE5gH7jaB3dE5gH7jK9mN0p"}},
		{"ansi", "\x1b[2Kxoxb-2048-4096-Qz8Lm2Xw7Vt9Kp3N\n", []string{"xoxb-2048-4096-Qz8Lm2Xw7Vt9Kp3N"}},
		{"ansi", `{"msg":"key\nAKIAQ7ZPLXW3RTYU4BNM"}`, []string{"AKIAQ7ZPLXW3RTYU4BNM"}},
		{"pass", "DB_PASS=Qz8Lm2Xw7Vt9\n--- PASS: TestLogin (0.00s)\n", []string{"Qz8Lm2Xw7Vt9"}},
		{"keys", "data:\n  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n  tls.key: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURB\n", []string{"UklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURB"}},
		// Key spellings.
		{"keys", `{"clientSecretKey": "Jm4Xq9Lz2Vw7Rt5PcK8d", "apiTokenValue": "Lp3Wz8Qx2Rv7Nt5Km9Ys"}`, []string{"Jm4Xq9Lz2Vw7Rt5PcK8d", "Lp3Wz8Qx2Rv7Nt5Km9Ys"}},
		{"keys", "secretKey=Hy6Tq2Lz9Xw4Vm8Rk3Pb\n", []string{"Hy6Tq2Lz9Xw4Vm8Rk3Pb"}},
		{"keys", "client-secret: Qz7Lm2Xw9Rt4Vk8Np3J\n", []string{"Qz7Lm2Xw9Rt4Vk8Np3J"}},
		{"keys", "db_password = 'Pq8Lz2Wx7'\n", []string{"Pq8Lz2Wx7"}},
		{"keys", "ENCRYPTION_KEY=Zk8Qw2Lx9Rv4Tm7P\nsigning_key: Mq2Zx8Lw7Rv3Tk9P\n", []string{"Zk8Qw2Lx9Rv4Tm7P", "Mq2Zx8Lw7Rv3Tk9P"}},
		{"keys", "refresh_token=Xr7Lq2Zw9Vt4Km8P; access_token: Vt4Km8PXr7Lq2Zw9\n", []string{"Xr7Lq2Zw9Vt4Km8P", "Vt4Km8PXr7Lq2Zw9"}},
		{"keys", "DB_PASS=Lq9Wz2Xr7 pwd=Zr8Lq2Wx9 creds: Tk7Lq2Zw9Xr4Vm8N\n", []string{"Lq9Wz2Xr7", "Zr8Lq2Wx9", "Tk7Lq2Zw9Xr4Vm8N"}},
		{"keys", `{"auths":{"registry.example.com":{"auth":"ZGVwbG95OlBhc3N3MHJkSGVyZTEyMw=="}}}`, []string{"ZGVwbG95OlBhc3N3MHJkSGVyZTEyMw=="}},
		{"keys", "GPG_PASSPHRASE=Vx8Lq2Zw9Rt4 export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", []string{"Vx8Lq2Zw9Rt4", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}},
		// The value on the next line.
		{"next-line", "{\n  \"db_password\": {\n    \"sensitive\": true,\n    \"type\": \"string\",\n    \"value\": \"Pw7zXq2Lr9VtK4mN\"\n  }\n}\n", []string{"Pw7zXq2Lr9VtK4mN"}},
		{"next-line", "env:\n  - name: DB_PASSWORD\n    value: Lz8Qw2Xr9Vt4Km\n", []string{"Lz8Qw2Xr9Vt4Km"}},
		{"next-line", `[{"name": "API_TOKEN", "value": "Tk9Lq2Zw8Xr4Vm7N"}]`, []string{"Tk9Lq2Zw8Xr4Vm7N"}},
		{"next-line", "password:\n  Rq7Lz2Xw9Vt4\n", []string{"Rq7Lz2Xw9Vt4"}},
		// Cookies.
		{"cookie", "< Set-Cookie: _app_session=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5YWJj; Path=/; HttpOnly\n", []string{"Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5YWJj"}},
		{"cookie", "> Cookie: theme=dark; JSESSIONID=8F14E45FCEEA167A5A36DEDD4BEA2543\n", []string{"8F14E45FCEEA167A5A36DEDD4BEA2543"}},
		// URL user, odd values, APPID|SECRET, connection strings.
		{"url-user", "remote: https://Vk2Lq9Zx7Wr3Tn8Mp5Jc4Hd6Yb1Gs0Fa@git.example.com/group/repo.git\n", []string{"Vk2Lq9Zx7Wr3Tn8Mp5Jc4Hd6Yb1Gs0Fa"}},
		{"odd", "password: =Kq8Lz2Wx9RmT4vNp\npassword=~Xq9zLr2Vw7Tk5Mb3\n", []string{"Kq8Lz2Wx9RmT4vNp", "Xq9zLr2Vw7Tk5Mb3"}},
		{"odd", "FB_ACCESS_TOKEN=123456789012345|Aq9zXr2Lw7Vt5Kp3Nm8Jc\n", []string{"Aq9zXr2Lw7Vt5Kp3Nm8Jc"}},
		{"odd", "Server=db;Database=app;User Id=sa;Password=Gq7Lz2Xw9Rt4;\n", []string{"Gq7Lz2Xw9Rt4"}},
		{"sql", "CREATE ROLE app WITH LOGIN PASSWORD 'Tz9Lq2Wx8Rv4';\nCREATE USER 'ci'@'%' IDENTIFIED BY 'Mq7Lz2Xw9Rt4';\n", []string{"Tz9Lq2Wx8Rv4", "Mq7Lz2Xw9Rt4"}},
		{"odd", "DefaultEndpointsProtocol=https;AccountName=acct1;AccountKey=Qx7Lz2Wm9Rt4Vk8Np3Jc6Hy1Bd5Gf0SaQx7Lz2Wm9Rt4==;EndpointSuffix=core.windows.net\n", []string{"Qx7Lz2Wm9Rt4Vk8Np3Jc6Hy1Bd5Gf0Sa"}},
		{"odd", "GET https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&sig=Xq9zLr2Vw7Tk5Mb3Hy6Pd1%2BQc8%3D HTTP/1.1\n", []string{"Xq9zLr2Vw7Tk5Mb3Hy6Pd1"}},
	}
}

// codeLines are lines of source code and logs whose right-hand sides are
// code, names or prose: each must come out exactly as it went in.
var codeLines = []string{
	"    token = parser.next()",
	"    password: str = field(default=None)",
	"\tsecret := os.Getenv(\"APP_SECRET\")",
	"    api_key = config.get(\"api_key\")",
	"        if token is None: raise ValueError(\"missing token\")",
	"        self.password = password",
	"const tokenHeader = \"Authorization\"",
	"func (c *Client) SetToken(token string) {",
	"    secret_key = self._derive_key(salt, iterations=100000)",
	"D/Auth ( 1234): token=Token{7d3e1f2}",
	"    token = get_token(user)",
	"  apiKey: string;",
	"const secret = process.env.SECRET",
	"if password == confirm {",
	"        self.token = token",
	"def login(user, password=None):",
	"    secret = b\"\"",
	"\ttoken := t.nextNonSpace()",
	"\t\ttoken.ADD: allNumeric,",
	"    next_token = self._get_param(\"NextToken\")",
	"            \"accessToken\": response[\"accessToken\"],",
	"    _SSO_TOKEN_CACHE_DIR = os.path.expanduser(",
	"\tTOKEN_READ  = STANDARD_RIGHTS_READ | TOKEN_QUERY",
	"test/test_pwd.py:17:            self.assertEqual(e[1], e.pw_passwd)",
	"def unix_getpass(prompt='Password: ', stream=None):",
	"            \"Resource\":\"arn:aws:secretsmanager:*:*:secret:rds-custom!*\",",
	"    \"AWS::SecretsManager::Secret\": \"c85175a4ebcce361\",",
	"const secretValue = 0x53c237_53c237",
	"TOKEN_PREFIX = 'k8s-aws-v1.'",
	"jsonnet_token = r'[^\\W\\d]\\w*'",
	"PASSWORD_MIN_LENGTH=12",
	"token_url = https://oauth2.example.com/token",
	"passwd:         compat",
	"password_file=/run/secrets/db_password",
	"PWD=/home/runner/work/app",
	"author: Jane Smith",
	"passes: 12 failures: 0",
	"machine learning password reset flow",
	"Set-Cookie: lang=en; Path=/",
	"ssh -p 2222 deploy@host",
	"docker run -p 8080:80 nginx",
	"mkdir -p /tmp/build && cd /tmp/build",
	"password = getpass.getpass('Password: ')",
	"  \"ChangeToken\": \"abcd12f2-46da-4fdb-b8d5-fbd4c466928f\",",
	"            line.Suffix = []Comment{{Token: \"// indirect\", Suffix: true}}",
	"\t\t\tPassword: password16,",
	"    credentials = load_credentials(path)",
	"session = requests.Session()",
	"signature = sign(payload, key)",
	"tokenizer: bert-base-uncased",
	"max_tokens: 4096",
	"  \"LockToken\":\"1eb5ec48-0000-0000-0000-ee9b906c541e\",",
	"        auth_token_config = '//{}{}:_authToken'.format(",
	"        password = \":****\"",
	"        information can be provided via the --username and --password options",
	"    help=\"Specify a proxy in the form scheme://[user:passwd@]proxy.server:port.\",",
	"-- the password 'reset' flow",
	"--- PASS: TestAuth/with_token (0.01s)",
	"    --- PASS: TestZ/a_1 (0.00s)",
	"PASS: test_login_token",
	"const tokenRe = `[A-Za-z0-9]{32}`",
	"api_key_pattern = r\"[a-f0-9]+\"",
	"    password: !vault |",
	"  MasterUserPassword: !Ref DbPassword",
	"HEX0fAKIAMTS7ZC6PZ2LXXF4G",
	"blob1Kghp_aB3dE5gH7jaB3dE5gH7jaB3dE5gH7jK9mN0p",
}

func TestClasses(t *testing.T) {
	p := mustPolicy(t, Options{})
	for _, c := range classCases() {
		t.Run(c.class, func(t *testing.T) {
			out := checkAllWays(t, p, c.in, c.secrets[0])
			for _, sec := range c.secrets {
				for i := 0; i+MinRepeat <= len(sec); i++ {
					if frag := sec[i : i+MinRepeat]; strings.Contains(out, frag) {
						t.Errorf("%q: piece %q of %q visible: %q", c.in, frag, sec, out)
						break
					}
				}
			}
		})
	}
}

func TestCodeIntact(t *testing.T) {
	p := mustPolicy(t, Options{})
	for _, line := range codeLines {
		in := line + "\n"
		if got := checkAllWays(t, p, in, ""); got != in {
			t.Errorf("changed:\n got %q\nwant %q", got, in)
		}
	}
}

// TestRepeats: a value found once is masked at its later occurrences, only
// after it was found, however the writes split them, and in the other
// stream of the run.
func TestRepeats(t *testing.T) {
	p := mustPolicy(t, Options{})
	const v = "Zq8v3LmN0pXr7TsW2yBd9KcF"
	cases := []struct{ in, want string }{
		{"token=" + v + "\nsaw " + v + " twice " + v + "\n", "token=[REDACTED:token]\nsaw [REDACTED:token] twice [REDACTED:token]\n"},
		// Before it was found, it is no secret: released bytes are final.
		{"saw " + v + "\ntoken=" + v + "\n", "saw " + v + "\ntoken=[REDACTED:token]\n"},
		// Short values are not remembered.
		{"password=hunter2\nhunter2 again\n", "password=[REDACTED:password]\nhunter2 again\n"},
		// Inside a longer word it is masked too: it is the same bytes.
		{"secret: " + v + "\nx" + v + "y\n", "secret: [REDACTED:secret]\nx[REDACTED:secret]y\n"},
	}
	for _, c := range cases {
		if got := checkAllWays(t, p, c.in, v); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}

	// Across streams: what stdout found, stderr masks from then on.
	mem := NewMemory()
	var o, e bytes.Buffer
	wo, we := p.NewSharedWriter(&o, mem), p.NewSharedWriter(&e, mem)
	we.Write([]byte("before: " + v + "\n"))
	wo.Write([]byte("token=" + v + "\n"))
	we.Write([]byte("after: " + v[:5]))
	we.Write([]byte(v[5:] + "\n"))
	wo.Close()
	we.Close()
	if want := "before: " + v + "\nafter: [REDACTED:token]\n"; e.String() != want {
		t.Errorf("stderr %q, want %q", e.String(), want)
	}
	if want := "token=[REDACTED:token]\n"; o.String() != want {
		t.Errorf("stdout %q, want %q", o.String(), want)
	}
}

// TestRepeatsConcurrent: two streams learning and masking at once (run
// with -race).
func TestRepeatsConcurrent(t *testing.T) {
	p := mustPolicy(t, Options{})
	mem := NewMemory()
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 2)
	for i := range outs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			w := p.NewSharedWriter(&outs[i], mem)
			for k := 0; k < 300; k++ {
				v := "Zq8v3LmN0pXr" + string(rune('A'+i)) + strings.Repeat(string(rune('a'+k%26)), 3) + "9KcF"
				w.Write([]byte("token=" + v + "\n" + v + "\n"))
			}
			w.Close()
		}(i)
	}
	wg.Wait()
	for i := range outs {
		if strings.Contains(outs[i].String(), "Zq8v3LmN0pX") {
			t.Errorf("stream %d: a value is visible", i)
		}
	}
	if n := mem.m.Len(); n > MemoryValues {
		t.Errorf("memory holds %d values, bound %d", n, MemoryValues)
	}
}

// TestRepeatsBounded: at most MemoryValues values are remembered, the
// first ones.
func TestRepeatsBounded(t *testing.T) {
	p := mustPolicy(t, Options{})
	var in, want strings.Builder
	for i := 0; i < MemoryValues+10; i++ {
		v := "Zq8v3LmN0p" + strings.Repeat("x", i%7) + string(rune('A'+i%26)) + string(rune('a'+i/26)) + "9KcF"
		in.WriteString("token=" + v + "\n")
		want.WriteString("token=[REDACTED:token]\n")
	}
	// Every value again: the first MemoryValues are masked.
	var vals []string
	for _, line := range strings.Split(strings.TrimSpace(in.String()), "\n") {
		vals = append(vals, strings.TrimPrefix(line, "token="))
	}
	for i, v := range vals {
		in.WriteString(v + "\n")
		if i < MemoryValues {
			want.WriteString("[REDACTED:token]\n")
		} else {
			want.WriteString(v + "\n")
		}
	}
	if got := checkAllWays(t, p, in.String(), ""); got != want.String() {
		t.Errorf("got ...%q", tail([]byte(got)))
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "MYSQL_PWD": true, "DB_PASS": true, "DB_PWD": true, "SMTP_PASS": true,
		"LDAP_BIND_PW": true, "GPG_PASSPHRASE": true, "BASIC_AUTH": true, "GITHUB_PAT": true,
		"DOCKER_AUTH_CONFIG": true, "SENTRY_DSN": true, "SLACK_WEBHOOK_URL": true, "STRIPE_SK": true,
		"GOOGLE_APPLICATION_CREDENTIALS": true, "MAPS_APIKEY": true, "DEPLOY_KEY": true, "db_password": true,
		"PWD": false, "OLDPWD": false, "PATH": false, "BYPASS": false, "NODE_PATH": false, "DISK": false,
		"GITHUB_TOKEN_URL": false, "PASSWORD_MIN_LENGTH": false, "SECRET_KEY_FILE": false, "TOKEN_ENDPOINT": false,
		"PRIVATE_REGISTRY": true, // a name that looks secret: --redact-allow-env exempts it
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestEnvForms: an environment value in the forms commands print it:
// base64 wrapped at 64 and 76 columns (every line masked), percent-encoded
// with lower-case hex or %20; and --redact-allow-env.
func TestEnvForms(t *testing.T) {
	const long = "Bz7Lq2Xw9Rt4Vk8Np3Jc6Hy1Md5Gf0Sa2Qe7Wu4Io9Pl3Kj8Nh6Bg1Vf5Cd0Xs7Za2Lm9"
	const odd = "Kz9/Lq2+Xw7 Rt4=Vm8&Np3"
	p := mustPolicy(t, Options{
		Environ:  []string{"SERVICE_TOKEN=" + long, "DEPLOY_TOKEN=" + odd, "PRIVATE_REGISTRY=registry.example.com", "OTHER_SECRET=registry.example.org"},
		AllowEnv: []string{"PRIVATE_REGISTRY"},
	})
	for _, v := range []string{long, long + "\n"} {
		enc := base64.StdEncoding.EncodeToString([]byte(v))
		for _, width := range []int{64, 76} {
			var in strings.Builder
			var lines []string
			for i := 0; i < len(enc); i += width {
				lines = append(lines, enc[i:min(i+width, len(enc))])
				in.WriteString(enc[i:min(i+width, len(enc))] + "\n")
			}
			out := checkAllWays(t, p, in.String(), lines[0])
			for _, l := range lines {
				if strings.Contains(out, l) {
					t.Errorf("width %d: line %q of the encoding visible in %q", width, l, out)
				}
			}
		}
	}
	q := percent(odd, "")
	for _, in := range []string{q, lowerHex(q), url.QueryEscape(odd), lowerHex(url.QueryEscape(odd)), percent(odd, "/")} {
		if out := checkAllWays(t, p, "a="+in+"\n", in); strings.Contains(out, in) {
			t.Errorf("%q visible in %q", in, out)
		}
	}
	// JSON: with "/" escaped (PHP), and JSON in a JSON string.
	const slashed = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	const quoted = `ab"cd\ef 12/gh+ij=kl`
	pj := mustPolicy(t, Options{Environ: []string{"MY_SECRET=" + slashed, "API_SECRET=" + quoted}})
	for _, in := range []string{
		`{"k":"wJalrXUtnFEMI\/K7MDENG\/bPxRfiCYEXAMPLEKEY"}`,
		`"{\"k\":\"ab\\\"cd\\\\ef 12/gh+ij=kl\"}"`,
	} {
		if out := checkAllWays(t, pj, in+"\n", ""); strings.Contains(out, "K7MDENG") || strings.Contains(out, "gh+ij=kl") {
			t.Errorf("%s visible: %q", in, out)
		}
	}
	if out := checkAllWays(t, p, "push registry.example.com/app\n", ""); out != "push registry.example.com/app\n" {
		t.Errorf("an exempted variable was masked: %q", out)
	}
	if out := checkAllWays(t, p, "push registry.example.org/app\n", ""); strings.Contains(out, "registry.example.org") {
		t.Errorf("a secret-named variable was not masked: %q", out)
	}
	// --redact-env of an exempted name masks it all the same.
	p = mustPolicy(t, Options{Environ: []string{"PRIVATE_REGISTRY=registry.example.com"}, AllowEnv: []string{"PRIVATE_REGISTRY"}, EnvNames: []string{"PRIVATE_REGISTRY"}})
	if out := p.String("registry.example.com"); out != "[REDACTED:env:PRIVATE_REGISTRY]" {
		t.Errorf("got %q", out)
	}
}
