package redact

import (
	"strings"
	"testing"
)

// TestLabel: the receipt's command label masks the password options of
// commands (SPEC §6), which only the whole command line tells apart, and
// leaves ordinary commands alone.
func TestLabel(t *testing.T) {
	p := mustPolicy(t, Options{Environ: []string{"DEPLOY_TOKEN=Dp9Lq2Zw8Xr4Vm7N"}})
	cases := []struct {
		argv   []string
		secret string // "" : the label equals argv
	}{
		{[]string{"mysql", "-uroot", "-pTq7zWm2xLp9RsV4c", "-h", "db"}, "Tq7zWm2xLp9RsV4c"},
		{[]string{"curl", "-fsS", "-u", "deploy:Wq9zLr3TnX7vKm2P", "https://x"}, "Wq9zLr3TnX7vKm2P"},
		{[]string{"curl", "--user", "deploy:Wq9zLr3TnX7vKm2P", "https://x"}, "Wq9zLr3TnX7vKm2P"},
		{[]string{"sshpass", "-p", "Hq2Lz9Wx7Vr3", "ssh", "host"}, "Hq2Lz9Wx7Vr3"},
		{[]string{"docker", "login", "-u", "bot", "-p", "Nv8cQ2wZr5LtKx3m", "registry.example.com"}, "Nv8cQ2wZr5LtKx3m"},
		{[]string{"docker", "login", "--password", "Nv8cQ2wZr5LtKx3m", "ghcr.io"}, "Nv8cQ2wZr5LtKx3m"},
		{[]string{"redis-cli", "-a", "Rk8Vq2Lz7Wx3Tn5M", "ping"}, "Rk8Vq2Lz7Wx3Tn5M"},
		{[]string{"mysql", "--password=Tq7zWm2xLp9RsV4c"}, "Tq7zWm2xLp9RsV4c"},
		{[]string{"tool", "--password", "hunter22"}, "hunter22"},
		{[]string{"true", "-H", "Authorization: Bearer", "abc123def456ghi789"}, "abc123def456ghi789"},
		{[]string{"sh", "-c", "echo $DEPLOY_TOKEN; curl -u ci:Wq9zLr3TnX7vKm2P x"}, "Wq9zLr3TnX7vKm2P"},
		{[]string{"deploy", "Dp9Lq2Zw8Xr4Vm7N"}, "Dp9Lq2Zw8Xr4Vm7N"},
		{[]string{"make", "-j4", "test"}, ""},
		{[]string{"docker", "run", "-p", "8080:80", "nginx"}, ""},
		{[]string{"ssh", "-p", "2222", "host"}, ""},
		{[]string{"mysql", "-p", "appdb"}, ""},
		{[]string{"curl", "-u", "deploy", "https://x"}, ""},
	}
	for _, c := range cases {
		got := p.Label(c.argv, nil)
		if c.secret == "" {
			if strings.Join(got, "\x00") != strings.Join(c.argv, "\x00") {
				t.Errorf("%q: label %q, want it unchanged", c.argv, got)
			}
			continue
		}
		joined := strings.Join(got, " ")
		if strings.Contains(joined, c.secret) || !strings.Contains(joined, "[REDACTED:") {
			t.Errorf("%q: label %q", c.argv, got)
		}
		if len(got) != len(c.argv) {
			t.Errorf("%q: %d arguments in the label", c.argv, len(got))
		}
	}
	// The rest of an argument stays: only the password is masked.
	if got := p.Label([]string{"mysql", "-uroot", "-pTq7zWm2xLp9RsV4c"}, nil); got[2] != "-p[REDACTED:cli-password]" {
		t.Errorf("label %q", got)
	}
	if got := p.Label([]string{"curl", "-u", "deploy:Wq9zLr3TnX7vKm2P"}, nil); got[2] != "deploy:[REDACTED:cli-password]" {
		t.Errorf("label %q", got)
	}
	// The arguments after a KEY=VALUE or --option=VALUE one are not its
	// value: only that argument's value is masked.
	for _, argv := range [][]string{
		{"true", "DB_PASSWORD=Pq7wXz2mKv9", "./deploy.sh", "--verbose"},
		{"docker", "login", "--password=Pq7wXz2mKv9", "reg.example.com"},
		{"docker", "run", "-e", "DB_PASSWORD=Pq7wXz2mKv9", "img"},
		{"tool", "--api-key=Pq7wXz2mKv9AbCdEf12", "next"},
		{"tool", "token=Pq7wXz2mKv9AbCdEf12", "build"},
		{"git", "-c", "http.extraheader=AUTHORIZATION: basic ZGVwbG95OlBhc3N3MHJk", "fetch"},
	} {
		got := p.Label(argv, nil)
		last := len(argv) - 1
		if got[last] != argv[last] || strings.Contains(strings.Join(got, " "), "Pq7wXz2mKv9") || strings.Contains(strings.Join(got, " "), "ZGVwbG95OlBhc3N3MHJk") {
			t.Errorf("%q: label %q", argv, got)
		}
	}
}
