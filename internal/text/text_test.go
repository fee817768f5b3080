package text

import "testing"

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Bytes(0), "0 B"}, {Bytes(1023), "1023 B"}, {Bytes(1024), "1.0 KiB"}, {Bytes(3 << 20), "3.0 MiB"},
		{Commas(0), "0"}, {Commas(999), "999"}, {Commas(1000), "1,000"}, {Commas(1234567), "1,234,567"}, {Commas(-16384), "-16,384"},
		{Plural(1), ""}, {Plural(0), "s"}, {Plural(2), "s"},
		{ShellQuote("plain-word_1.txt"), "plain-word_1.txt"}, {ShellQuote(""), "''"}, {ShellQuote("a b"), "'a b'"}, {ShellQuote("it's"), `'it'\''s'`},
		{VerbCommand("", "prune"), "capwrap prune"}, {VerbCommand("/a b/tool-outputs", "read"), "capwrap --dir '/a b/tool-outputs' read"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
