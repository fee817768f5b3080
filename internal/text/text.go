// Package text formats what capwrap prints for people and for the shell:
// byte counts, numbers, plurals, shell words and the capwrap command lines
// that its hints and markers suggest. It knows nothing of processes, files
// or captures.
package text

import (
	"fmt"
	"strconv"
	"strings"
)

// Bytes formats a byte count n with binary units for a person: "0 B",
// "512 B", "1.2 KiB", "3.4 MiB" (one decimal from KiB up, IEC prefixes).
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Commas writes n with thousands separators: 1,000,000.
func Commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Plural is "s" unless n is 1: "1 capture", "2 captures".
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ShellQuote returns s as one word of a POSIX shell command line: s itself
// when it holds only characters no shell treats specially, else s in single
// quotes, each single quote inside written as quote, backslash, quote,
// quote. The empty string becomes two single quotes.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// VerbCommand is the command line that runs capwrap's verb on the
// tool-outputs directory dirArg ("" for none needed): "capwrap prune",
// "capwrap --dir /src/tool-outputs prune".
func VerbCommand(dirArg, verb string) string {
	if dirArg == "" {
		return "capwrap " + verb
	}
	return "capwrap --dir " + ShellQuote(dirArg) + " " + verb
}
