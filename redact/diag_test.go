package redact

import "testing"

var sinkInt int

func BenchmarkDiagSum(b *testing.B) {
	buf := make([]byte, 64<<10)
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		s := 0
		for _, c := range buf {
			s += int(c)
		}
		sinkInt = s
	}
}
func BenchmarkDiagScanLog(b *testing.B) {
	p, _ := NewPolicy(Options{})
	a := p.m.ac
	buf := benchLog(64<<10, 0)
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		st, j := int32(0), 0
		for j < len(buf) {
			st, j = a.scan(st, buf, j)
		}
	}
}
