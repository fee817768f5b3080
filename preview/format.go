package preview

import (
	"fmt"
	"strings"
)

// HumanBytes formats a byte count n with binary units for a person: "0 B",
// "512 B", "1.2 KiB", "3.4 MiB" (one decimal from KiB up, IEC prefixes).
func HumanBytes(n int64) string {
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
