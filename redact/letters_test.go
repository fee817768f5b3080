package redact

import (
	"testing"
)

// Values of letters only and prefixed numbers (issue 27, breaker findings
// of r27-fix-letters): a value with no digit after a secret key was shown,
// depending on how the key was written (password=V, password: "V",
// token=V), and so were long octal and binary numbers. Every value is
// invented.

// TestPrefixedNumbers: an octal or binary number too long and irregular for
// a constant is a value; file modes and bit masks stay.
func TestPrefixedNumbers(t *testing.T) {
	checkValueCases(t, []valueCase{
		{"secret=0o7312345670123\n", "secret=[REDACTED:secret]\n"},
		{"api_key=0b101100111000111101\n", "api_key=[REDACTED:api-key]\n"},
		{"token: \"0O73123456701\"\n", "token: \"[REDACTED:token]\"\n"},
		{"secret=0x9f8e7d6c5b4a39281726354\n", "secret=[REDACTED:secret]\n"},
		{"secret=0o755\n", "secret=0o755\n"},
		{"secret=0o104755\n", "secret=0o104755\n"},
		{"api_key=0b1010\n", "api_key=0b1010\n"},
		{"secret=0b11111111000000001\n", "secret=0b11111111000000001\n"},
		{"secret=0b1011_0011_1000_1111_01\n", "secret=0b1011_0011_1000_1111_01\n"},
	})
}

