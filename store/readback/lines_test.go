package readback

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestParseLineRange(t *testing.T) {
	tests := []struct {
		in   string
		want LineRange
		ok   bool
	}{
		{"1:10", LineRange{1, 10}, true},
		{"-50:", LineRange{-50, 0}, true},
		{":5", LineRange{0, 5}, true},
		{"7:", LineRange{7, 0}, true},
		{"-10:-2", LineRange{-10, -2}, true},
		{"3", LineRange{3, 3}, true},
		{"-1", LineRange{-1, -1}, true},
		{"121:19851", LineRange{121, 19851}, true},
		{" 2:3 ", LineRange{2, 3}, true},
		{":", LineRange{}, false},
		{"", LineRange{}, false},
		{"0:5", LineRange{}, false},
		{"5:0", LineRange{}, false},
		{"0", LineRange{}, false},
		{"a:b", LineRange{}, false},
		{"1:2:3", LineRange{}, false},
		{"1.5:", LineRange{}, false},
		{"99999999999999999999:", LineRange{}, false},
	}
	for _, tt := range tests {
		got, err := ParseLineRange(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseLineRange(%q) = %+v, %v; want %+v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	// The testscripts match these texts: they are the usage errors.
	for in, want := range map[string]string{
		"a:b": `invalid --lines "a:b": want A:B, A:, :B or N (1-based, inclusive; negative counts from the end)`,
		"9:3": `invalid --lines "9:3": the range ends before it starts`,
	} {
		if _, err := ParseLineRange(in); err == nil || err.Error() != want {
			t.Errorf("ParseLineRange(%q) error %v, want %s", in, err, want)
		}
	}
}

// refLines is the reference for LineRange.resolve: split the content into
// lines (a final newline ends the last line), pick lines A..B the slow way.
func refLines(content string, lr LineRange) string {
	var lines []string
	for rest := content; rest != ""; {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			lines = append(lines, rest)
			break
		}
		lines = append(lines, rest[:i+1])
		rest = rest[i+1:]
	}
	n := int64(len(lines))
	abs := func(x, dflt int64) int64 {
		switch {
		case x == 0:
			return dflt
		case x < 0:
			return n + 1 + x
		}
		return x
	}
	a, b := abs(lr.A, 1), abs(lr.B, n)
	a = max(a, 1)
	b = min(b, n)
	var sb strings.Builder
	for i := a; i <= b; i++ {
		sb.WriteString(lines[i-1])
	}
	return sb.String()
}

func TestLineRangeResolve(t *testing.T) {
	contents := []string{
		"", "\n", "\n\n\n", "a", "a\n", "a\nb", "a\nb\n", "one\ntwo\nthree\n",
		"one\n\nthree\nfour", "x\n" + strings.Repeat("long", 100) + "\nz\n",
	}
	ranges := []LineRange{
		{1, 1}, {1, 0}, {0, 1}, {2, 3}, {-1, 0}, {-1, -1}, {-2, 0}, {-50, 0}, {0, -2},
		{-3, -2}, {3, 2}, {2, -1}, {-2, 3}, {5, 0}, {1, 100}, {100, 200}, {-100, -50},
	}
	// Block sizes at, under and over the line lengths exercise the block
	// boundaries of both scanners.
	for _, block := range []int{1, 2, 3, 5, 64, scanBlock} {
		buf := make([]byte, block)
		for _, c := range contents {
			r := strings.NewReader(c)
			for _, lr := range ranges {
				lo, hi, err := lr.resolve(r, int64(len(c)), buf)
				if err != nil {
					t.Fatalf("block %d %q %+v: %v", block, c, lr, err)
				}
				got := c[lo:hi]
				if want := refLines(c, lr); got != want {
					t.Errorf("block %d, content %q, lines %+v: got %q, want %q", block, c, lr, got, want)
				}
			}
		}
	}
}

func TestScanBackward(t *testing.T) {
	tests := []struct {
		content           string
		floor, end, count int64
		pos, found        int64
	}{
		{"a\nb\nc\n", 0, 5, 1, 4, 1},
		{"a\nb\nc\n", 0, 5, 2, 2, 2},
		{"a\nb\nc\n", 0, 5, 3, 0, 2},
		{"a\nb\nc\n", 0, 6, 1, 6, 1},
		{"a\nb\nc\n", 3, 5, 2, 3, 1}, // floor stops the scan: fewer found, floor returned
		{"abc", 0, 3, 1, 0, 0},
		{"", 0, 0, 1, 0, 0},
		{"\n\n", 0, 2, 2, 1, 2},
		{"x\ny", 0, 3, 0, 3, 0},
	}
	for _, tt := range tests {
		for _, block := range []int{1, 2, 4, scanBlock} {
			pos, found, err := scanBackward(strings.NewReader(tt.content), tt.floor, tt.end, tt.count, make([]byte, block))
			if err != nil || pos != tt.pos || found != tt.found {
				t.Errorf("scanBackward(%q, %d, %d, %d) block %d = %d, %d, %v; want %d, %d",
					tt.content, tt.floor, tt.end, tt.count, block, pos, found, err, tt.pos, tt.found)
			}
		}
	}
}

// TestLastLinesBoundedMemory is the honest check of issue 5's "the last 50
// lines of a 200,000-line capture read with bounded memory": resolving
// --lines -50: and copying it allocates one scan block, not the file.
func TestLastLinesBoundedMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stdout.log")
	var b bytes.Buffer
	for i := 1; i <= 200000; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	size := int64(b.Len()) // 1,288,895 bytes, as `seq 1 200000`
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	var want bytes.Buffer
	for i := 199951; i <= 200000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	read := func(w io.Writer) {
		buf := make([]byte, scanBlock)
		lo, hi, err := LineRange{-50, 0}.resolve(f, size, buf)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := copyRange(w, f, lo, hi, 64<<10, buf); err != nil {
			t.Fatal(err)
		}
	}
	var got bytes.Buffer
	read(&got)
	if got.String() != want.String() {
		t.Fatalf("last 50 lines: got %q", got.String())
	}

	allocs := testing.AllocsPerRun(20, func() { read(io.Discard) })
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const runs = 20
	for range runs {
		read(io.Discard)
	}
	runtime.ReadMemStats(&after)
	perRun := (after.TotalAlloc - before.TotalAlloc) / runs
	t.Logf("--lines -50: of %d bytes (200,000 lines): %.0f allocations, %d bytes allocated per read", size, allocs, perRun)
	if allocs > 10 {
		t.Errorf("%.0f allocations per read, want at most 10", allocs)
	}
	if limit := uint64(scanBlock + 16<<10); perRun > limit {
		t.Errorf("%d bytes allocated per read of a %d-byte file, want at most %d", perRun, size, limit)
	}
}

// TestCopyRangeCuts: a read longer than its limit is cut after the last
// newline that fits, or inside a line that does not fit at the last
// character boundary, never inside a UTF-8 sequence (SPEC §8), so that
// the next read, at the offset returned, starts with a whole character.
func TestCopyRangeCuts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        string
		lo, limit int64
		want      string
		truncated bool
	}{
		{"fits", "ab\ncd\n", 0, 10, "ab\ncd\n", false},
		{"after the last newline", "ab\ncd\nef\n", 0, 7, "ab\ncd\n", true},
		{"a line longer than the limit", "abcdefgh\n", 0, 5, "abcde", true},
		{"inside a two-byte character", "aéé\n", 0, 4, "aé", true},
		{"at a character's end", "aéé\n", 0, 3, "aé", true},
		{"inside a three-byte character", "ab€€", 0, 6, "ab€", true},
		{"inside a four-byte character", "a😀b", 0, 3, "a", true},
		{"from inside a line", "xxaéé\n", 2, 4, "aé", true},
		{"one character longer than the limit", "😀😀", 0, 2, "\xf0\x9f", true},
		{"a stray continuation byte", "ab\x80\x80cd", 0, 3, "ab\x80", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			r := strings.NewReader(tc.in)
			n, _, truncated, err := copyRange(&out, r, tc.lo, int64(len(tc.in)), tc.limit, make([]byte, 16))
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want || truncated != tc.truncated || n != int64(out.Len()) {
				t.Errorf("copyRange(%q from %d, limit %d) = %q (n %d), truncated %v; want %q, %v", tc.in, tc.lo, tc.limit, out.String(), n, truncated, tc.want, tc.truncated)
			}
		})
	}
}
