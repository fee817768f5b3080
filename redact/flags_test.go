package redact

import (
	"strings"
	"testing"
)

// Command-line carriers of passwords (SPEC §6 "command-line flags", issue
// 27): flags anywhere on any line, the password options and arguments of
// more commands, a URL's user that is no key, and switches that take no
// password. Every value is invented.

type flagCase struct {
	class   string
	in      string
	secrets []string // no piece of flagPiece bytes of them may show
	keep    []string // each must show as it is (host, path, the next flag)
}

// flagPiece is the length of the pieces of a secret that must not show.
const flagPiece = 6

func flagCases() []flagCase {
	return []flagCase{
		// --password / --passwd at column 0 of a later line (cat deploy.sh,
		// heredocs, usage text, one flag per line).
		{"column0", "x\n--password Sx3cretPw9\n", []string{"Sx3cretPw9"}, []string{"x\n--password "}},
		{"column0", "#!/bin/sh\nexec tool \\\n--passwd Hq2Lz9Wx7Vr3 \\\n--verbose\n", []string{"Hq2Lz9Wx7Vr3"}, []string{"--verbose"}},
		{"column0", "cat <<EOF\n--password 'Tz8Kq2Lm!9'\nEOF\n", []string{"Tz8Kq2Lm!9"}, []string{"EOF\n"}},
		{"column0", "usage:\r\n--password Wm3Qz8Lr2Tx\r\n", []string{"Wm3Qz8Lr2Tx"}, []string{"usage:\r\n"}},
		{"column0", "[flags]\n--db-password Rk8Vq2Lz7Wx3\n--host db.example.com\n", []string{"Rk8Vq2Lz7Wx3"}, []string{"--host db.example.com"}},
		{"column0", "keytool -importkeystore\n-srcstorepass Lk2Qz8Wx7Vr3\n-destkeystore k.jks\n", []string{"Lk2Qz8Wx7Vr3"}, []string{"-destkeystore k.jks"}},
		{"column0", "a\n--passphrase \"Gx7Kq2 Lz9Wr4\"\n", []string{"Gx7Kq2 Lz9Wr4"}, nil},
		{"column0", "ok\n--password=Plainword\n", []string{"Plainword"}, nil},
		// -p-style options of commands known for them, on a line a
		// backslash continues.
		{"continued", "mysql -uroot \\\n  -pTq7zWm2xLp9 -h db appdb\n", []string{"Tq7zWm2xLp9"}, []string{"-h db appdb"}},
		{"continued", "+ sshpass \\\n    -p Hq2Lz9Wx7Vr3 ssh deploy@host\n", []string{"Hq2Lz9Wx7Vr3"}, []string{"ssh deploy@host"}},
		{"continued", "docker login \\\r\n  -u bot \\\r\n  -p Nv8cQ2wZr5Lt \\\r\n  registry.example.com\r\n", []string{"Nv8cQ2wZr5Lt"}, []string{"registry.example.com"}},
		{"continued", "redis-cli -h cache \\\n -a Rk8Vq2Lz7Wx3 ping\n", []string{"Rk8Vq2Lz7Wx3"}, []string{"ping"}},
		{"continued", "echo start\nmysqladmin \\\n\t-u root \\\n\t-pWz2Lq8Rx7Tv3 status\n", []string{"Wz2Lq8Rx7Tv3"}, []string{"status"}},
		// Argument lists (subprocess logs, Docker's CMD, Kubernetes args), a
		// quoted command, a command after a colour.
		{"argv", `{"cmd": ["mysql", "-uroot", "-pTq7zWm2xLp9"]}`, []string{"Tq7zWm2xLp9"}, []string{`"-uroot"`}},
		{"argv", `args: ["--password", "Hq2Lz9Wx7Vr3", "--host", "db"]`, []string{"Hq2Lz9Wx7Vr3"}, []string{`"--host", "db"]`}},
		{"argv", "Popen(['sshpass', '-p', 'Rk8Vq2Lz7Wx3', 'ssh', 'h'])\n", []string{"Rk8Vq2Lz7Wx3"}, []string{"'ssh', 'h'"}},
		{"argv", "x\n  args: ['--db-password', 'Wz2Lq8Rx7Tv3']\n", []string{"Wz2Lq8Rx7Tv3"}, nil},
		{"argv", `exec: "docker" login -u bot -p Nv8cQ2wZr5Lt ghcr.io`, []string{"Nv8cQ2wZr5Lt"}, []string{"ghcr.io"}},
		{"argv", "\x1b[32m$ \x1b[0mmysql -uroot -pGx7Kq2Lz9W\n", []string{"Gx7Kq2Lz9W"}, []string{"\x1b[0mmysql -uroot -p"}},
		{"argv", `{"cmd":"mysql -uroot -pTq7zWm2xLp9"}`, []string{"Tq7zWm2xLp9"}, []string{`"}`}},
		{"argv", `{"cmd":"sshpass -p Rk8Vq2Lz7Wx3"}, "exit": 1`, []string{"Rk8Vq2Lz7Wx3"}, []string{`"}, "exit": 1`}},
		{"argv", "log: 'redis-cli -a Gx7Kq2Lz9W' failed\n", []string{"Gx7Kq2Lz9W"}, []string{"' failed"}},
		{"argv", "spec:\n  args:\n  - --password\n  - Tz8Kq2Lm9X\n  - --port\n", []string{"Tz8Kq2Lm9X"}, []string{"- --port"}},
		{"argv", "args:\r\n    - \"--db-password\"\r\n    - \"Lk2Qz8Wx7V\"\r\n", []string{"Lk2Qz8Wx7V"}, nil},
		// htpasswd(1): -b takes the password from the command line.
		{"htpasswd", "htpasswd -b /etc/nginx/.htpasswd admin S3cretPw!9\n", []string{"S3cretPw!9"}, []string{"/etc/nginx/.htpasswd admin "}},
		{"htpasswd", "+ htpasswd -nb alice Qz8Lm2Xw7Vt\n", []string{"Qz8Lm2Xw7Vt"}, []string{"alice "}},
		{"htpasswd", "htpasswd -cb .htpasswd bob 'Kx7 Lq2Wz9'\n", []string{"Kx7 Lq2Wz9"}, []string{".htpasswd bob"}},
		{"htpasswd", "htpasswd -bB -C 12 /srv/htpasswd carol Wm3Qz8Lr2T\n", []string{"Wm3Qz8Lr2T"}, []string{"/srv/htpasswd carol"}},
		{"htpasswd", "$ htpasswd -nbm dave Rz8qL2vWn5 > out\n", []string{"Rz8qL2vWn5"}, []string{"> out"}},
		{"htpasswd", "RUN htpasswd -Bbn admin \"Fq2Lw9zRt7\" >> /etc/h\n", []string{"Fq2Lw9zRt7"}, []string{">> /etc/h"}},
		// smbclient(1): -U|--user=[DOMAIN\]USERNAME[%PASSWORD].
		{"smbclient", "smbclient //server/share -U alice%S3cretPw9\n", []string{"S3cretPw9"}, []string{"-U alice%"}},
		{"smbclient", "smbclient //srv/share --user=alice%Gx7Kq2Lz9W -c 'ls'\n", []string{"Gx7Kq2Lz9W"}, []string{"--user=alice%", "-c 'ls'"}},
		{"smbclient", "smbclient -U 'CORP\\alice%Hx7kP2qLm9' //srv/share\n", []string{"Hx7kP2qLm9"}, []string{"//srv/share"}},
		{"smbclient", "rpcclient -U \"bob%Tz8Kq2Lm9X\" 10.0.0.5 -c enumdomusers\n", []string{"Tz8Kq2Lm9X"}, []string{"10.0.0.5"}},
		{"smbclient", "smbclient -L //fs01 -Ualice%Wq9zLr3TnX\n", []string{"Wq9zLr3TnX"}, []string{"-L //fs01"}},
		// sqlcmd -P password (Microsoft's sqlcmd and bcp documentation).
		{"sqlcmd", "sqlcmd -S srv -U sa -P S3cretPw9\n", []string{"S3cretPw9"}, []string{"-S srv -U sa -P "}},
		{"sqlcmd", "sqlcmd -S tcp:db,1433 -U sa -P 'Yuk0n!Xw7' -Q \"SELECT 1\"\n", []string{"Yuk0n!Xw7"}, []string{"-Q \"SELECT 1\""}},
		{"sqlcmd", "/opt/mssql-tools/bin/sqlcmd -P Lk2Qz8Wx7V -U sa\n", []string{"Lk2Qz8Wx7V"}, []string{"-U sa"}},
		{"sqlcmd", "bcp dbo.t out t.dat -S srv -U sa -P Rz8qL2vWn5 -c\n", []string{"Rz8qL2vWn5"}, []string{"t.dat"}},
		{"sqlcmd", "sqlcmd -S srv -U sa -PNv8cQ2wZr5\n", []string{"Nv8cQ2wZr5"}, nil},
		// A URL's user is no key: only its password is masked, the host and
		// path stay.
		{"url-user", "git clone https://x-access-token:ghs_16C7e42F292c6912E7710c838347Ae178B4a@github.com/org/repo.git\n",
			[]string{"ghs_16C7e42F292c6912E7710c838347Ae178B4a"}, []string{"https://x-access-token:", "@github.com/org/repo.git"}},
		{"url-user", "remote: https://oauth2:glpat-Ab3dEfGh1234567890xy@gitlab.com/grp/proj.git\n",
			[]string{"glpat-Ab3dEfGh1234567890xy"}, []string{"@gitlab.com/grp/proj.git"}},
		{"url-user", "git remote set-url origin https://token:Wq9zLr3TnX7vKm2P@git.example.com/a/b\n",
			[]string{"Wq9zLr3TnX7vKm2P"}, []string{"@git.example.com/a/b"}},
		{"url-user", `{"url":"https://api_key:Zq8v3LmN0pXr7TsW@pkgs.example.com/simple"}`,
			[]string{"Zq8v3LmN0pXr7TsW"}, []string{"@pkgs.example.com/simple"}},
		{"url-user", "pip install --index-url https://x-access-token:Tq7zWm2xLp9RsV4c@pypi.example.com/simple pkg\n",
			[]string{"Tq7zWm2xLp9RsV4c"}, []string{"@pypi.example.com/simple pkg"}},
		{"url-user", `{"remote":"https:\/\/x-access-token:Hq2Lz9Wx7Vr3Kt8M@github.com\/org\/repo.git"}`,
			[]string{"Hq2Lz9Wx7Vr3Kt8M"}, []string{`@github.com\/org\/repo.git`}},
		// Other commands' password arguments, each from its manual.
		{"other", "rabbitmqctl add_user alice S3cretPw9\n", []string{"S3cretPw9"}, []string{"add_user alice "}},
		{"other", "rabbitmqctl -n rabbit@h change_password bob Hq2Lz9Wx7V\n", []string{"Hq2Lz9Wx7V"}, []string{"bob "}},
		{"other", "sqlplus scott/T1ger!pw@orcl @script.sql\n", []string{"T1ger!pw"}, []string{"scott/", "@orcl @script.sql"}},
		{"other", "expdp system/Wz2Lq8Rx7T directory=d dumpfile=x.dmp\n", []string{"Wz2Lq8Rx7T"}, []string{"directory=d"}},
		{"other", "vault login s.AbCdEfGh12345678\n", []string{"s.AbCdEfGh12345678"}, nil},
		{"other", "zip -r -P Gx7Kq2Lz9W out.zip dir\n", []string{"Gx7Kq2Lz9W"}, []string{"out.zip dir"}},
		{"other", "7z a -pRz8qL2vWn5 -mhe=on out.7z dir\n", []string{"Rz8qL2vWn5"}, []string{"-mhe=on"}},
		{"other", "unrar x -pFq2Lw9zRt7 a.rar\n", []string{"Fq2Lw9zRt7"}, []string{"a.rar"}},
		{"other", "ssh-keygen -t ed25519 -N Kx7Lq2Wz9R -f id\n", []string{"Kx7Lq2Wz9R"}, []string{"-f id"}},
		{"other", "ssh-keygen -p -P Old1pass2X -N New3pass4Y -f id\n", []string{"Old1pass2X", "New3pass4Y"}, []string{"-f id"}},
		{"other", "az login --service-principal -u app-id -p Tq7zWm2xLp --tenant t1\n", []string{"Tq7zWm2xLp"}, []string{"--tenant t1"}},
		{"other", "ipmitool -I lanplus -H 10.0.0.9 -U admin -P Wq9zLr3TnX chassis status\n", []string{"Wq9zLr3TnX"}, []string{"chassis status"}},
		{"other", "openssl enc -aes-256-cbc -k Lk2Qz8Wx7V -in f -out f.enc\n", []string{"Lk2Qz8Wx7V"}, []string{"-in f -out f.enc"}},
		{"other", "twine upload -u __token__ -p Nv8cQ2wZr5Lt dist/*\n", []string{"Nv8cQ2wZr5Lt"}, []string{"dist/*"}},
		{"other", "wget --http-password=Hx7kP2qLm9 https://x.example.com/f\n", []string{"Hx7kP2qLm9"}, []string{"https://x.example.com/f"}},
		{"other", "lftp -u bob,Rk8Vq2Lz7W ftp.example.com\n", []string{"Rk8Vq2Lz7W"}, []string{"ftp.example.com"}},
		{"other", "xfreerdp /u:admin /p:Tz8Kq2Lm9X /v:10.0.0.1\n", []string{"Tz8Kq2Lm9X"}, []string{"/v:10.0.0.1"}},
		{"other", "plink -ssh -pw Gx7Kq2Lz9W admin@10.0.0.2 uptime\n", []string{"Gx7Kq2Lz9W"}, []string{"admin@10.0.0.2 uptime"}},
		{"other", `C:\> net use Z: \\fs01\share Wz2Lq8Rx7T /user:CORP\bob` + "\r\n", []string{"Wz2Lq8Rx7T"}, []string{"/user:CORP"}},
		{"other", "net rpc user -U admin%Hq2Lz9Wx7V -S dc1\n", []string{"Hq2Lz9Wx7V"}, []string{"-S dc1"}},
		{"other", "mc alias set myminio http://10.0.0.3:9000 minioadmin Zq8v3LmN0pXr\n", []string{"Zq8v3LmN0pXr"}, []string{"http://10.0.0.3:9000 minioadmin"}},
		{"other", "aws configure set aws_secret_access_key Wq9zLr3TnX7vKm2PWq9zLr3TnX7vKm2P12345678\n", []string{"Wq9zLr3TnX7vKm2PWq9zLr3TnX7vKm2P12345678"}, nil},
		{"other", "ldappasswd -x -D cn=admin -w Lk2Qz8Wx7V -s New3pass4Y uid=bob\n", []string{"Lk2Qz8Wx7V", "New3pass4Y"}, []string{"uid=bob"}},
		{"other", "curl --oauth2-bearer Fq2Lw9zRt7Vx3Kp8 https://api.example.com\n", []string{"Fq2Lw9zRt7Vx3Kp8"}, []string{"https://api.example.com"}},
		{"other", "mysql -uroot -p\"Tq7z Wm2xLp9\" app\n", []string{"Tq7z Wm2xLp9"}, []string{" app"}},
	}
}

// flagNearMisses must pass unchanged: switches named after a password, a
// flag after a password's flag, commands whose same letters are no
// password, a password asked for rather than given.
var flagNearMisses = []string{
	"adduser --disabled-password --no-create-home bob\n",
	"adduser --disabled-password --gecos '' app2\n",
	"x\nadduser --disabled-password bob2\n",
	"echo $T | docker login --password-stdin registry1.example.com\n",
	"docker login -u bot --password-stdin ghcr.io\n",
	"--password-file /run/secrets/db2\n",
	"psql --no-password -h db1 app\n",
	"systemd-ask-password --no-tty 'Disk:'\n",
	"ansible-playbook site.yml --ask-become-pass -i hosts2\n",
	"mysql --skip-password -u root2\n",
	"tool --password= --user=bob2\n",
	"x\n--password --user=bob2\n",
	"echo x | passwd --stdin bob2\n",
	"gpg --batch --passphrase-fd 0 --passphrase-repeat 3 -c f2\n",
	"gh auth login --with-token < t2.txt\n",
	"mysql -u root --password --database db1\n",
	"the --password option sets it\n",
	"htpasswd -v /etc/h alice2\n",
	"htpasswd -n alice2\n",
	"htpasswd -D /etc/h bob2\n",
	"smbclient -U alice2 //srv/share\n",
	"smbclient //srv/share -N -c 'get a%b2'\n",
	"sqlplus / as sysdba\n",
	"sqlplus -S /@prod2 @run.sql\n",
	"az login -u app -p /etc/ssl/app2.pem --service-principal\n",
	"vault login -method=userpass username=bob2\n",
	"vault login -\n",
	"zip -r out2.zip dir\n",
	"7z a -p out2.7z dir\n",
	"ssh -p 2222 host2\n",
	"rabbitmqctl list_users -p vhost2\n",
	"ssh-keygen -t ed25519 -N '' -f id2\n",
	"openssl enc -k env:PASS2 -in f\n",
	"git clone https://github.com/org/repo2.git\n",
	"sqlcmd -S srv2 -E -Q 'SELECT 1'\n",
	"wget -U 'Mozilla/5.0 (X11; rv:109.0) Gecko/20100101' https://x2.example.com\n",
	"net use \\\\fs01\\share /user:CORP\\bob2\n",
	"net use Z: \\\\fs01\\share * /user:bob2\n",
	"net start w32time2\n",
	"aws configure set region us-east-2\n",
	"mc alias list myminio2\n",
	"plink -ssh admin@10.0.0.2 uptime2\n",
	"xfreerdp /u:admin /v:10.0.0.12\n",
	"lftp -u bob2 ftp.example.com\n",
	"curl -u deploy2 https://x2.example.com\n",
	`["--password", "--no-verify2"]`,
	`["adduser", "--disabled-password", "bob2"]`,
	`["--password", "$PW2"]`,
	"args:\n  - --password\n  - --stdin2\n",
	"args:\n  - --password-file\n  - /run/s2\n",
	"see --password\n  - a list item2\n",
	// Code and scripts that pass a variable, not a password.
	`subprocess.run(["mysql", "-p" + password2])`,
	`exec.Command("sshpass", "-p", pw2, "ssh")`,
	"mysql -p\"$PW2\" db\n",
	"htpasswd -b \"$FILE\" \"$USER\" \"$PASS2\"\n",
	"smbclient -U \"$USER%$PASS2\" //s\n",
	"usage: sqlcmd -U login_id -P password\n",
	"az login -u $APP -p $SECRET2\n",
	"vault login \"$VAULT_TOKEN2\"\n",
	"git clone https://x-access-token:${{ secrets.GH2 }}@github.com/o/r\n",
	"sqlplus \"${USER}/${PW2}@${DB}\"\n",
	`"mysql -p" prompts for it2`,
}

// pieces returns every flagPiece-byte piece of s (s itself when shorter).
func pieces(s string) []string {
	if len(s) <= flagPiece {
		return []string{s}
	}
	var out []string
	for i := 0; i+flagPiece <= len(s); i++ {
		out = append(out, s[i:i+flagPiece])
	}
	return out
}

func TestFlagCarriers(t *testing.T) {
	p := mustPolicy(t, Options{})
	for _, c := range flagCases() {
		t.Run(c.class, func(t *testing.T) {
			out := checkAllWays(t, p, c.in, c.secrets[0])
			for _, s := range c.secrets {
				for _, piece := range pieces(s) {
					if strings.Contains(out, piece) {
						t.Errorf("%q: %q shows %q of %q", c.in, out, piece, s)
						break
					}
				}
			}
			for _, k := range c.keep {
				if !strings.Contains(out, k) {
					t.Errorf("%q: %q lost %q", c.in, out, k)
				}
			}
		})
	}
}

func TestFlagNearMisses(t *testing.T) {
	p := mustPolicy(t, Options{})
	for _, in := range flagNearMisses {
		if out := checkAllWays(t, p, in, ""); out != in {
			t.Errorf("%q masked: %q", in, out)
		}
	}
}

// TestFlagLabel: the receipt's command label masks the same arguments as
// the stream (Policy.Label), and a flag after a password's flag is no
// value there either.
func TestFlagLabel(t *testing.T) {
	p := mustPolicy(t, Options{})
	cases := []struct {
		argv   []string
		secret string // "": the label equals argv
	}{
		{[]string{"htpasswd", "-b", "/etc/nginx/.htpasswd", "admin", "S3cretPw!9"}, "S3cretPw!9"},
		{[]string{"htpasswd", "-nbB", "alice", "Qz8Lm2Xw7Vt"}, "Qz8Lm2Xw7Vt"},
		{[]string{"smbclient", "//server/share", "-U", "alice%S3cretPw9"}, "S3cretPw9"},
		{[]string{"smbclient", "-U", `CORP\alice%Hx7kP2qLm9`, "//srv/share"}, "Hx7kP2qLm9"},
		{[]string{"sqlcmd", "-S", "srv", "-U", "sa", "-P", "S3cretPw9"}, "S3cretPw9"},
		{[]string{"git", "clone", "https://x-access-token:ghs_16C7e42F292c6912E7710c838347Ae178B4a@github.com/org/repo.git"}, "ghs_16C7e42F292c6912E7710c838347Ae178B4a"},
		{[]string{"rabbitmqctl", "add_user", "alice", "S3cretPw9"}, "S3cretPw9"},
		{[]string{"sqlplus", "scott/T1ger!pw@orcl"}, "T1ger!pw"},
		{[]string{"zip", "-P", "Gx7Kq2Lz9W", "out.zip", "f"}, "Gx7Kq2Lz9W"},
		{[]string{"7z", "a", "-pRz8qL2vWn5", "out.7z"}, "Rz8qL2vWn5"},
		{[]string{"ssh-keygen", "-N", "Kx7Lq2Wz9R", "-f", "id"}, "Kx7Lq2Wz9R"},
		{[]string{"adduser", "--disabled-password", "--no-create-home", "bob"}, ""},
		{[]string{"docker", "login", "--password-stdin", "registry1.example.com"}, ""},
		{[]string{"mysql", "-u", "root", "--password", "--database", "db1"}, ""},
		{[]string{"sqlplus", "/", "as", "sysdba"}, ""},
		{[]string{"az", "login", "-p", "/etc/ssl/app2.pem"}, ""},
	}
	for _, c := range cases {
		got := p.Label(c.argv, nil)
		joined := strings.Join(got, " ")
		if c.secret == "" {
			if joined != strings.Join(c.argv, " ") {
				t.Errorf("%q: label %q, want it unchanged", c.argv, got)
			}
			continue
		}
		for _, piece := range pieces(c.secret) {
			if strings.Contains(joined, piece) {
				t.Errorf("%q: label %q shows %q", c.argv, got, piece)
				break
			}
		}
		if !strings.Contains(joined, "[REDACTED:") {
			t.Errorf("%q: label %q has no marker", c.argv, got)
		}
		if c.argv[0] == "git" && !strings.Contains(joined, "@github.com/org/repo.git") {
			t.Errorf("%q: label %q lost the host and path", c.argv, got)
		}
	}
}
