package redact

import (
	"bytes"
	"strings"
	"testing"
)

func TestSeenSecretsMaskLabelFragments(t *testing.T) {
	p, err := NewPolicy(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := p.NewWriter(&out)
	// The key arrives in two writes, as from printf "...AKIAQ7ZP"; printf "LXW3...".
	w.Write([]byte("aws_key=AKIAQ7ZP"))
	w.Write([]byte("LXW3RTYU4BNM\nplain text\n"))
	w.Close()
	if strings.Contains(out.String(), "AKIAQ7ZP") {
		t.Fatalf("stream leaked: %q", out.String())
	}
	seen := w.Seen()
	if len(seen) != 1 || string(seen[0]) != "AKIAQ7ZPLXW3RTYU4BNM" {
		t.Fatalf("seen %q", seen)
	}
	tests := []struct{ in, want string }{
		{`printf "aws_key=AKIAQ7ZP"; sleep 1; printf "LXW3RTYU4BNM\n"`, `printf "aws_key=[REDACTED:seen]"; sleep 1; printf "[REDACTED:seen]\n"`},
		{"short AKIAQ7Z piece", "short AKIAQ7Z piece"}, // 7 bytes: not a fragment
		{"no secret here", "no secret here"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := MaskSeen(tt.in, seen); got != tt.want {
			t.Errorf("MaskSeen(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSeenSecretsBounded(t *testing.T) {
	p, _ := NewPolicy(Options{Values: []string{"value-one-secret"}})
	w := p.NewWriter(&bytes.Buffer{})
	for i := 0; i < 200; i++ {
		w.Write([]byte("x value-one-secret y\n"))
	}
	w.Close()
	if n := len(w.Seen()); n != seenSecretCount {
		t.Fatalf("remembered %d secrets, want the bound %d", n, seenSecretCount)
	}
	if w.Replaced() != 200 {
		t.Fatalf("replaced %d", w.Replaced())
	}
}
