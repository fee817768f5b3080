//go:build !purego

package match

import (
	"sync"

	"golang.org/x/sys/cpu"
)

// vectorFeatures are the CPU's vector features as golang.org/x/sys/cpu
// reads them: on macOS it also asks the kernel whether AVX-512 may be
// used, which the registers' state (XGETBV) does not tell there until a
// first use. Elsewhere cpu_amd64.go reads them itself, at first use.
var vectorFeatures = sync.OnceValue(func() cpuFeatures {
	return cpuFeatures{avx2: cpu.X86.HasAVX2, avx512f: cpu.X86.HasAVX512F, avx512bw: cpu.X86.HasAVX512BW}
})
