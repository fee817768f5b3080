package redact

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/capwrap/capwrap/redact/internal/testlog"
)

// benchPolicy is the policy of the Writer benchmarks: the catalogue, one
// secret environment value and patterns, its vector tables built.
func benchPolicy(b *testing.B, patterns ...string) *Policy {
	p, err := NewPolicy(Options{Environ: []string{"VAULT_CREDENTIAL=s3cr3t-v4lu3-0123456789", "HOME=/root", "PATH=/usr/bin:/bin"}, Patterns: patterns})
	if err != nil {
		b.Fatal(err)
	}
	vectorReady(p)
	return p
}

func benchWriter(b *testing.B, p *Policy, secretEvery int) {
	log := testlog.Make(8<<20, secretEvery)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	b.ResetTimer()
	var replaced int64
	for i := 0; i < b.N; i++ {
		w := p.NewWriter(io.Discard)
		for off := 0; off < len(log); off += 64 << 10 {
			if _, err := w.Write(log[off:min(off+64<<10, len(log))]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		replaced = w.Replaced()
	}
	if secretEvery > 0 && replaced == 0 {
		b.Fatal("no secret replaced")
	}
	if secretEvery == 0 && replaced != 0 {
		b.Fatalf("%d replacements in a log without secrets", replaced)
	}
}

// BenchmarkWriterNoSecrets measures the redactor alone on an 8 MiB log
// without secrets, written in 64 KiB chunks. Target: at least 1 GB/s.
func BenchmarkWriterNoSecrets(b *testing.B) { benchWriter(b, benchPolicy(b), 0) }

// BenchmarkWriterSecretEvery100Lines measures the same log with a
// credential on every 100th line. Target: at least 300 MB/s.
func BenchmarkWriterSecretEvery100Lines(b *testing.B) { benchWriter(b, benchPolicy(b), 100) }

// BenchmarkWriterNoSecretsScalar is BenchmarkWriterNoSecrets without the
// vector prefilter: what CPUs without AVX2 (and other architectures) get.
func BenchmarkWriterNoSecretsScalar(b *testing.B) { benchWriter(b, scalarOnly(benchPolicy(b)), 0) }

// BenchmarkWriterPattern measures the same log with a --redact-pattern,
// which makes every line start a candidate.
func BenchmarkWriterPattern(b *testing.B) { benchWriter(b, benchPolicy(b, `ticket-[0-9]{6}`), 0) }

// BenchmarkWriterPlainLog measures an 8 MiB log in the style of make
// bench's (test results, compiler warnings, source lines; a fake AWS key
// every 10,000 lines), where keywords are rare, written in 256 KiB chunks
// as capwrap's pipe reader does.
func BenchmarkWriterPlainLog(b *testing.B) {
	p, err := NewPolicy(Options{Environ: []string{"HOME=/root", "PATH=/usr/bin:/bin"}})
	if err != nil {
		b.Fatal(err)
	}
	vectorReady(p)
	var sb strings.Builder
	for i := 0; sb.Len() < 8<<20; i++ {
		switch {
		case i%10000 == 9999:
			sb.WriteString("config: aws_access_key_id=AKIAQ7ZPLXW3RTYU4BNM region=eu-west-1\n")
		case i%3 == 0:
			fmt.Fprintf(&sb, "tests/test_mod%03d.py::test_case_%05d PASSED%s[%3d%%]\n", i%250, i%100000, strings.Repeat(" ", 30), i%100)
		case i%3 == 1:
			fmt.Fprintf(&sb, "src/module_%02d/file_%03d.c:%d:%d: warning: unused variable 'tmp_%d' [-Wunused-variable]\n", i%40, i%300, i%900, i%30, i)
		default:
			fmt.Fprintf(&sb, "   %d |     int tmp_%d = compute(%d);\n", i%900, i, i)
		}
	}
	log := []byte(sb.String())
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := p.NewWriter(io.Discard)
		for off := 0; off < len(log); off += 256 << 10 {
			w.Write(log[off:min(off+256<<10, len(log))])
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		if w.Replaced() == 0 {
			b.Fatal("the key was not replaced")
		}
	}
}

var sinkSum int

// BenchmarkBaselineSum only adds up the bytes of a 64 KiB buffer: not a
// target, a yardstick for what one pass over memory costs on the machine
// the other benchmarks run on (shared CI machines vary a lot).
func BenchmarkBaselineSum(b *testing.B) {
	buf := testlog.Make(64<<10, 0)
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		s := 0
		for _, c := range buf {
			s += int(c)
		}
		sinkSum = s
	}
}
