package receipt

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// jsonFooter is v as encoding/json's Encoder with HTML escaping off
// writes it, after FooterPrefix: what encodeFooter must write.
func jsonFooter(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString(FooterPrefix)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// footerStrings are strings that JSON escapes, or could be thought to.
var footerStrings = []string{
	"", "complete", "tool-outputs/20261130T030612Z-k3j4h5g6x2", `a"b\c`, "tab\there\nline\rcr",
	"\b\f\x00\x01\x1f\x7f", "<html> & 'quotes'", "caf\u00e9 \u2028 \u2029 \U0001F600",
	"bad \xff\xfe utf-8 \xe2\x82", "\xed\xa0\x80 surrogate", "/abs/dir with spaces/x",
}

// TestFooterJSON: the hand-written footers (footerjson.go) are byte for
// byte what encoding/json writes, for every field set or left out and
// strings that need escaping.
func TestFooterJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	str := func() *string {
		if rng.IntN(3) == 0 {
			return nil
		}
		s := footerStrings[rng.IntN(len(footerStrings))]
		return &s
	}
	num := func() *int {
		if rng.IntN(3) == 0 {
			return nil
		}
		n := rng.IntN(300) - 10
		return &n
	}
	num64 := func() *int64 {
		if rng.IntN(3) == 0 {
			return nil
		}
		n := rng.Int64N(1<<40) - 5
		return &n
	}
	count := func() int64 {
		if rng.IntN(2) == 0 {
			return 0
		}
		return rng.Int64N(1 << 33)
	}
	stream := func() *shortStream {
		if rng.IntN(3) == 0 {
			return nil
		}
		s := &shortStream{ObservedBytes: num64(), CommittedBytes: num64(), Lines: num64()}
		if rng.IntN(2) == 0 {
			s.Preview = &shortPreview{State: *or(str(), "truncated"), OmittedBytes: num64(), OmittedLines: num64()}
		}
		if rng.IntN(2) == 0 {
			s.Accounting = &shortAccounting{Pending: count(), Discarded: count()}
		}
		return s
	}
	for i := range 3000 {
		var c compactFooter
		c.ExitStatus, c.Process.ExitCode, c.Capture.State = num(), num(), CaptureState(*or(str(), ""))
		if got, want := string(encodeFooter(&c)), jsonFooter(t, &c); got != want {
			t.Fatalf("compact footer %d:\n got %s\nwant %s", i, got, want)
		}
		f := shortFooter{ID: str(), Dir: str(), ExitStatus: num(),
			Process: shortProcess{State: ProcessState(*or(str(), "exited")), PID: num(), ExitCode: num(), Signal: str(), Reason: str()},
			Capture: shortCapture{State: CaptureState(*or(str(), "complete")), Error: str()}}
		if s := str(); s != nil {
			f.Capture.Reason = new(Reason(*s))
		}
		if rng.IntN(2) == 0 {
			f.Redaction = &shortRedact{Replaced: count()}
			if rng.IntN(2) == 0 {
				f.Redaction.Enabled = new(rng.IntN(2) == 0)
			}
		}
		if rng.IntN(3) > 0 {
			f.Streams = &shortStreams{Stdout: stream(), Stderr: stream()}
		}
		if rng.IntN(3) == 0 {
			f.Descendants = &shortDescendants{Count: rng.IntN(100), Action: *or(str(), "ended")}
		}
		if got, want := string(encodeFooter(&f)), jsonFooter(t, &f); got != want {
			t.Fatalf("short footer %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// FuzzFooterString: a string in a footer is escaped as encoding/json
// escapes it.
func FuzzFooterString(f *testing.F) {
	for _, s := range footerStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := compactFooter{}
		c.Capture.State = CaptureState(s)
		if got, want := string(encodeFooter(&c)), jsonFooter(t, &c); got != want {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	})
}

// or is p, or &def when p is nil.
func or(p *string, def string) *string {
	if p == nil {
		return &def
	}
	return p
}
