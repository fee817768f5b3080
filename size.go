//go:build unix

package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// size is a byte count given as plain bytes or with a binary suffix: 64K,
// 32M, 1G, also KiB, MiB, GiB and a trailing B (SPEC §4 Limits). 0 means
// no limit where the flag says so.
type size int64

var sizeSuffixes = []struct {
	suffix string
	shift  uint
}{
	{"KIB", 10}, {"MIB", 20}, {"GIB", 30}, {"TIB", 40},
	{"KB", 10}, {"MB", 20}, {"GB", 30}, {"TB", 40},
	{"K", 10}, {"M", 20}, {"G", 30}, {"T", 40}, {"B", 0},
}

// maxSize is the largest size a size flag takes, 4096T: far beyond any
// disk, and small enough that sums of sizes cannot overflow an int64.
const maxSize = 1 << 52

// parseSize parses a size; the result is in bytes, at most maxSize.
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	var shift uint
	for _, sf := range sizeSuffixes {
		if strings.HasSuffix(t, sf.suffix) {
			t, shift = strings.TrimSpace(strings.TrimSuffix(t, sf.suffix)), sf.shift
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(t, "-") || err == nil && n > maxSize>>shift {
		return 0, fmt.Errorf("too large: at most %s", humanSize(maxSize))
	}
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size (bytes, or with K, M, G, KiB, MiB, GiB)", s)
	}
	return n << shift, nil
}

// humanSize writes n bytes as a user would: 16M rather than 16777216, in
// the largest binary unit that divides it.
func humanSize(n int64) string {
	for _, u := range []struct {
		s     string
		shift uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.s)
		}
	}
	return strconv.FormatInt(n, 10)
}

func (z *size) String() string { return strconv.FormatInt(int64(*z), 10) }
func (z *size) Type() string   { return "size" }
func (z *size) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*z = size(n)
	return nil
}
