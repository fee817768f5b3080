package preview

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// keptModel is what a Keeper of headCap and tailCap(+1 context) bytes must
// hold after s was written, however s was split.
func keptModel(s string, headCap, ringCap int) (head, tail string) {
	h := min(len(s), headCap)
	rest := s[h:]
	return s[:h], rest[max(0, len(rest)-ringCap):]
}

func checkKeeper(t *testing.T, k *Keeper, s string) {
	t.Helper()
	wantHead, wantTail := keptModel(s, k.headCap, k.ringCap)
	if got := string(k.head); got != wantHead {
		t.Errorf("head = %q, want %q", got, wantHead)
	}
	if got := string(k.tail()); got != wantTail {
		t.Errorf("tail = %q, want %q", got, wantTail)
	}
	if k.Total() != int64(len(s)) {
		t.Errorf("Total = %d, want %d", k.Total(), len(s))
	}
	if want := int64(strings.Count(s, "\n")); k.Lines() != want {
		t.Errorf("Lines = %d, want %d", k.Lines(), want)
	}
	if want := len(s) > 0 && s[len(s)-1] != '\n'; k.LastLinePartial() != want {
		t.Errorf("LastLinePartial = %v, want %v", k.LastLinePartial(), want)
	}
	if want := int64(len(s) - len(wantHead) - len(wantTail)); k.skipped() != want {
		t.Errorf("skipped = %d, want %d", k.skipped(), want)
	}
	if cap(k.head) > k.headCap || cap(k.ring) > k.ringCap {
		t.Errorf("capacity head %d ring %d exceeds %d, %d", cap(k.head), cap(k.ring), k.headCap, k.ringCap)
	}
}

func TestKeeperTable(t *testing.T) {
	// headCap 4, tail 5 (+1 context byte): ringCap 6.
	const hc, tc = 4, 5
	tests := []struct {
		name       string
		writes     []string
		head, tail string
		lines      int64
	}{
		{"empty", nil, "", "", 0},
		{"empty write", []string{""}, "", "", 0},
		{"under head", []string{"ab\n"}, "ab\n", "", 1},
		{"at head", []string{"abc\n"}, "abc\n", "", 1},
		{"over head by one", []string{"abcd\n"}, "abcd", "\n", 1},
		{"head and ring at capacity", []string{"abcd", "efghij"}, "abcd", "efghij", 0},
		{"ring over by one", []string{"abcdefghij", "k"}, "abcd", "fghijk", 0},
		{"ring wraps", []string{"abcd", "efg", "hij", "klm", "n\n"}, "abcd", "ijklmn\n"[1:], 1},
		{"one write larger than ring", []string{"ab", "cdefghijklmnopq\n"}, "abcd", "lmnopq\n"[1:], 1},
		{"exactly ring after head", []string{"abcd", "\n\n\n\n\n\n"}, "abcd", "\n\n\n\n\n\n", 6},
		{"wrap at ring end", []string{"abcd", "efghij", "klmnop"}, "abcd", "klmnop", 0},
		{"wrap partially", []string{"abcd", "efghij", "kl", "mno"}, "abcd", "ijklmno"[1:], 0},
	}
	for _, tt := range tests {
		all := strings.Join(tt.writes, "")
		run := func(name string, writes []string) {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				k := newKeeperBytes(hc, tc)
				for _, w := range writes {
					n, err := k.Write([]byte(w))
					if n != len(w) || err != nil {
						t.Fatalf("Write(%q) = %d, %v", w, n, err)
					}
				}
				if got := string(k.head); got != tt.head {
					t.Errorf("head = %q, want %q", got, tt.head)
				}
				if got := string(k.tail()); got != tt.tail {
					t.Errorf("tail = %q, want %q", got, tt.tail)
				}
				if k.Lines() != tt.lines {
					t.Errorf("Lines = %d, want %d", k.Lines(), tt.lines)
				}
				checkKeeper(t, k, all)
			})
		}
		run("as given", tt.writes)
		run("one write", []string{all})
		run("byte by byte", strings.Split(all, ""))
	}
}

// TestKeeperBoundaries writes sizes just under, at and over the head and
// tail capacities of a real-sized Keeper, in one piece, byte by byte and in
// random chunks.
func TestKeeperBoundaries(t *testing.T) {
	k0 := NewKeeper(100)
	hc, rc := k0.headCap, k0.ringCap
	if hc != 5*25+slackBytes || rc != 5*75+slackBytes+1 {
		t.Fatalf("NewKeeper(100) caps = %d, %d", hc, rc)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, hc - 1, hc, hc + 1, hc + rc - 1, hc + rc, hc + rc + 1, hc + 2*rc, hc + 2*rc + 1, 10 * (hc + rc)} {
		var sb strings.Builder
		for i := range n {
			if i%7 == 6 {
				sb.WriteByte('\n')
			} else {
				sb.WriteByte(byte('a' + i%26))
			}
		}
		s := sb.String()
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			k := NewKeeper(100)
			k.Write([]byte(s))
			checkKeeper(t, k, s)

			k = NewKeeper(100)
			for i := range len(s) {
				k.Write([]byte{s[i]})
			}
			checkKeeper(t, k, s)

			k = NewKeeper(100)
			for p := s; len(p) > 0; {
				c := min(len(p), rng.IntN(2*rc))
				k.Write([]byte(p[:c]))
				p = p[c:]
			}
			checkKeeper(t, k, s)
		})
	}
}

func TestKeeperMemoryBound(t *testing.T) {
	for _, c := range []int{-5, 0, 1, 3, 4, 100, 8000, 10000} {
		k := NewKeeper(c)
		chunk := bytes.Repeat([]byte("0123456789abcdef\n"), 4000)
		for range 20 {
			k.Write(chunk)
		}
		cc := max(c, 0)
		if got, bound := cap(k.head)+cap(k.ring), 5*cc+2*slackBytes+1; got > bound {
			t.Errorf("NewKeeper(%d) holds %d bytes, bound %d", c, got, bound)
		}
	}
}
