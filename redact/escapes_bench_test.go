package redact

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// BenchmarkWriterColoured measures coloured output with no secret (issue
// 27): 4 MB of jq -C and grep --color lines, an ESC every few bytes and
// keywords in a tenth of the lines, so that the display view is built at
// every keyword.
func BenchmarkWriterColoured(b *testing.B) {
	p, err := NewPolicy(Options{Environ: []string{"HOME=/root"}})
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for i := 0; sb.Len() < 4<<20; i++ {
		switch i % 10 {
		case 0:
			fmt.Fprintf(&sb, "  \x1b[0m\x1b[34;1m\"password_min_length\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[0;39m%d\x1b[0m\x1b[1;39m,\n", i)
		case 1, 2, 3:
			fmt.Fprintf(&sb, "  \x1b[0m\x1b[34;1m\"name\"\x1b[0m\x1b[1;39m:\x1b[0m \x1b[0;32m\"user-%05d\"\x1b[0m\x1b[1;39m,\n", i)
		default:
			fmt.Fprintf(&sb, "\x1b[35m\x1b[Ksrc/mod_%02d.go\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K\x1b[32m\x1b[K%d\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K\tx := \x1b[01;31m\x1b[Kcompute\x1b[m\x1b[K(%d)\n", i%40, i%900, i)
		}
	}
	in := []byte(sb.String())
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := p.NewWriter(io.Discard)
		for off := 0; off < len(in); off += 64 << 10 {
			w.Write(in[off:min(off+64<<10, len(in))])
		}
		w.Close()
	}
}
