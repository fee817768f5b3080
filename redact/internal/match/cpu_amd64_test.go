//go:build !purego && !darwin

package match

import (
	"go/build"
	"slices"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestVectorFeaturesAsSysCPU: the features read at first use are the ones
// golang.org/x/sys/cpu reads at its init (under the test's own GODEBUG).
func TestVectorFeaturesAsSysCPU(t *testing.T) {
	want := cpuFeatures{avx2: cpu.X86.HasAVX2, avx512f: cpu.X86.HasAVX512F, avx512bw: cpu.X86.HasAVX512BW}
	if got := vectorFeatures(); got != want {
		t.Errorf("vectorFeatures() = %+v; golang.org/x/sys/cpu: %+v", got, want)
	}
}

// TestGodebugOff: GODEBUG turns a feature off as golang.org/x/sys/cpu
// reads it, the last setting deciding.
func TestGodebugOff(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want bool
	}{
		{"", false},
		{"cpu.avx2=off", true},
		{"x=1,cpu.avx2=off,y=2", true},
		{"cpu.all=off", true},
		{"cpu.all=off,cpu.avx2=on", false},
		{"cpu.avx2=off,cpu.all=on", false},
		{"cpu.avx512f=off", false},
		{"cpu.avx2", false},
		{"cpu.avx2=no", false},
	} {
		if got := godebugOff(tc.env, "avx2"); got != tc.want {
			t.Errorf("godebugOff(%q, avx2) = %v; want %v", tc.env, got, tc.want)
		}
	}
}

// TestNoCPUPackageInit: outside macOS this package does not import
// golang.org/x/sys/cpu, whose init makes seven CPUIDs at every capwrap
// start (each a trap to the hypervisor in a virtual machine), a run that
// redacts nothing included; vectorFeatures asks at first use instead.
func TestNoCPUPackageInit(t *testing.T) {
	for _, goos := range []string{"linux", "freebsd"} {
		ctx := build.Default
		ctx.GOOS, ctx.GOARCH = goos, "amd64"
		p, err := ctx.ImportDir(".", 0)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(p.Imports, "golang.org/x/sys/cpu") {
			t.Errorf("%s/amd64: imports golang.org/x/sys/cpu", goos)
		}
	}
}
