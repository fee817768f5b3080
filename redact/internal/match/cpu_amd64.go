//go:build !purego && !darwin

package match

import (
	"os"
	"strings"
	"sync"
)

// vectorFeatures reads the CPU's vector features the first time a matcher
// asks (haveTeddy), as golang.org/x/sys/cpu does, but not in package
// init: in a virtual machine each CPUID traps to the hypervisor (about
// 0.1 ms each on the 2-core machine of issue 28), and that package makes
// seven of them and an XGETBV at every capwrap start, a run that redacts
// nothing (a silent one) included. As there, GODEBUG=cpu.avx2=off (or
// cpu.avx512f, cpu.avx512bw, cpu.all) turns a feature off.
var vectorFeatures = sync.OnceValue(func() cpuFeatures {
	var f cpuFeatures
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return f
	}
	_, _, ecx1, _ := cpuid(1, 0)
	if ecx1&(1<<27) == 0 { // OSXSAVE: XGETBV may be used
		return f
	}
	xcr0, _ := xgetbv()
	osAVX := xcr0&(1<<1) != 0 && xcr0&(1<<2) != 0                                 // XMM and YMM state
	osAVX512 := osAVX && xcr0&(1<<5) != 0 && xcr0&(1<<6) != 0 && xcr0&(1<<7) != 0 // opmask and ZMM state
	_, ebx7, _, _ := cpuid(7, 0)
	f.avx2 = osAVX && ebx7&(1<<5) != 0
	f.avx512f = osAVX512 && ebx7&(1<<16) != 0
	f.avx512bw = f.avx512f && ebx7&(1<<30) != 0
	f.avx2 = f.avx2 && !godebugOff(os.Getenv("GODEBUG"), "avx2")
	f.avx512f = f.avx512f && !godebugOff(os.Getenv("GODEBUG"), "avx512f")
	f.avx512bw = f.avx512bw && !godebugOff(os.Getenv("GODEBUG"), "avx512bw")
	return f
})

// godebugOff reports whether the GODEBUG value env turns the CPU feature
// name off, as golang.org/x/sys/cpu reads it: the last of "cpu.NAME=on",
// "cpu.NAME=off", "cpu.all=on" and "cpu.all=off" decides (on cannot
// enable what the CPU lacks).
func godebugOff(env, name string) bool {
	off := false
	for _, field := range strings.Split(env, ",") {
		key, value, ok := strings.Cut(field, "=")
		if !ok || (key != "cpu."+name && key != "cpu.all") {
			continue
		}
		switch value {
		case "on":
			off = false
		case "off":
			off = true
		}
	}
	return off
}

// cpuid executes CPUID with EAX and ECX set (cpu_amd64.s).
func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

// xgetbv reads XCR0, the register state the operating system saves
// (cpu_amd64.s); only when CPUID reports OSXSAVE.
func xgetbv() (eax, edx uint32)
