package runner

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/redact"
	"github.com/capwrap/capwrap/store"
)

// TestRawMap: the representation's offsets map back to raw ones exactly
// between the steps that wrote a marker, and to a marker step's start
// inside one (its raw bytes count as not in the file).
func TestRawMap(t *testing.T) {
	var m rawMap
	// raw 0..100 as is; raw [100,107) became 16 bytes [100,116); raw
	// [107,147) as is at [116,156); raw [147,187) became [156,172).
	m.bend(span{r0: 100, r1: 107, o0: 100, o1: 116})
	m.bend(span{r0: 147, r1: 187, o0: 156, o1: 172})
	for _, tc := range []struct{ c, want int64 }{
		{0, 0}, {50, 50}, {100, 100}, {101, 100}, {115, 100}, {116, 107}, {130, 121},
		{156, 147}, {160, 147}, {172, 187}, {200, 215},
	} {
		if got := m.raw(tc.c); got != tc.want {
			t.Errorf("raw(%d) = %d, want %d", tc.c, got, tc.want)
		}
	}
	// Past maxSpans the spans merge: never more raw bytes than before.
	var big rawMap
	for i := range int64(maxSpans + 10) {
		big.bend(span{r0: 10 * i, r1: 10*i + 5, o0: 12 * i, o1: 12*i + 7})
	}
	if len(big.spans) > maxSpans {
		t.Fatalf("%d spans kept", len(big.spans))
	}
	var exact rawMap
	for i := range int64(maxSpans + 10) {
		exact.spans = append(exact.spans, span{r0: 10 * i, r1: 10*i + 5, o0: 12 * i, o1: 12*i + 7})
	}
	for c := int64(0); c < 12*(maxSpans+10); c += 97 {
		if got, max := big.raw(c), exact.raw(c); got > max {
			t.Fatalf("merged raw(%d) = %d, more than the exact %d", c, got, max)
		}
	}
}

// TestUTF8Check: valid UTF-8 however the writes split it; invalid bytes
// and a sequence cut by the end of the stream are not.
func TestUTF8Check(t *testing.T) {
	for _, tc := range []struct {
		in    string
		valid bool
	}{
		{"", true}, {"plain\n", true}, {"é€😀 mixed", true}, {"a\xffb", false}, {"cut \xe2\x82", false},
		{"\xe2\x82\xac", true}, {"\xc3(", false}, {"x\x80", false}, {strings.Repeat("€", 5000), true},
	} {
		for _, size := range []int{len(tc.in) + 1, 1, 2, 3} {
			var u utf8Check
			for p := []byte(tc.in); len(p) > 0; {
				k := min(size, len(p))
				u.write(p[:k])
				p = p[k:]
			}
			if u.valid() != tc.valid {
				t.Errorf("%q in writes of %d: valid %v, want %v", tc.in, size, u.valid(), tc.valid)
			}
		}
	}
}

// TestSinkAccounting: a stream through the sink (the redactor, or none)
// into a real capture, as a run wires them, and the receipt's accounting
// and representation of it (SPEC §7): the identity holds, accepted raw
// bytes are those the file holds, discarded those it never will, and the
// committed representation grows and shrinks with the markers. Each case
// as one write and as writes of 1000 bytes.
func TestSinkAccounting(t *testing.T) {
	const short, long = "hunter2", "x9Kq2vLm8ZpT4wRb7YcN3dFh6JsA1eGu5iOk0PnQ" // markers are 16 bytes: +9, -24
	text := []byte(strings.Repeat("a line of text\n", 2000))                  // 30,000 bytes
	binary := bytes.Repeat([]byte{0, 0xff, 0xfe, 'x', 0x80, '\n'}, 5000)
	// "token " + secret + " in a line\n": 17 bytes and the secret's.
	withSecrets := func(secret string, n int) []byte {
		return []byte(strings.Repeat("token "+secret+" in a line\n", n))
	}
	for _, tc := range []struct {
		name      string
		redacting bool
		in        []byte
		lim       store.Limits
		state     receipt.CaptureState
		rep       receipt.Representation
		committed int64 // -1: len(in)
		accepted  int64 // -1: len(in)
	}{
		{"text", true, text, store.Limits{}, receipt.CaptureComplete, receipt.RepresentationRedactedText, -1, -1},
		{"redaction expands", true, withSecrets(short, 100), store.Limits{}, receipt.CaptureComplete, receipt.RepresentationRedactedText, 24*100 + 9*100, -1},
		{"redaction contracts", true, withSecrets(long, 100), store.Limits{}, receipt.CaptureComplete, receipt.RepresentationRedactedText, 57*100 - 24*100, -1},
		{"binary", true, binary, store.Limits{}, receipt.CaptureComplete, receipt.RepresentationBinary, -1, -1},
		{"--no-redact keeps bytes", false, append(append([]byte{}, binary...), short...), store.Limits{}, receipt.CaptureComplete, receipt.RepresentationRaw, -1, -1},
		{"max-capture-bytes stop", true, text, store.Limits{MaxCaptureBytes: 10000}, receipt.CapturePartial, receipt.RepresentationRedactedText, 10000, 10000},
		{"max-capture-bytes stop, --no-redact", false, binary, store.Limits{MaxCaptureBytes: 7777}, receipt.CapturePartial, receipt.RepresentationRaw, 7777, 7777},
		{"directory quota stop", false, text, store.Limits{DirQuota: 12000, QuotaChunk: 1000}, receipt.CapturePartial, receipt.RepresentationRaw, -2, -2},
	} {
		for _, size := range []int{len(tc.in), 1000} {
			t.Run(fmt.Sprintf("%s/writes of %d", tc.name, size), func(t *testing.T) {
				lc, _ := testLazyCapture(t, tc.lim, nil)
				ready := func() (*redact.Policy, error) { return nil, nil }
				if tc.redacting {
					ready = func() (*redact.Policy, error) { return redact.NewPolicy(redact.Options{Values: []string{short, long}}) }
				}
				var preview bytes.Buffer
				ls := lc.stream(store.Stdout)
				s := &sink{dst: io.MultiWriter(ls, &preview), ready: ready, file: ls}
				for p := tc.in; len(p) > 0; {
					k := min(size, len(p))
					s.Write(p[:k])
					p = p[k:]
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				c, err := lc.made()
				if err != nil {
					t.Fatal(err)
				}
				lc.closeArrival()
				res, err := c.Finalize()
				if err != nil {
					t.Fatal(err)
				}
				released, raw, valid := s.ledger.facts()
				acc := accounting(int64(len(tc.in)), released, res.Stdout.Committed, raw)
				if err := acc.Check(); err != nil {
					t.Fatal(err)
				}
				if res.State != tc.state {
					t.Errorf("capture %s, want %s", res.State, tc.state)
				}
				if got := representation(tc.redacting, valid); got != tc.rep {
					t.Errorf("representation %s, want %s", got, tc.rep)
				}
				file, err := os.ReadFile(filepath.Join(c.AbsPath(), "stdout.log"))
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(file)) != res.Stdout.Committed || !bytes.HasPrefix(preview.Bytes(), file) {
					t.Errorf("file of %d bytes, committed %d: not the representation's first bytes", len(file), res.Stdout.Committed)
				}
				want := func(n int64) int64 {
					switch n {
					case -1:
						return int64(len(tc.in))
					case -2: // the quota: what the file got, with nothing replaced
						return int64(len(file))
					}
					return n
				}
				if res.Stdout.Committed != want(tc.committed) {
					t.Errorf("committed %d, want %d", res.Stdout.Committed, want(tc.committed))
				}
				if acc.Accepted != want(tc.accepted) || acc.Pending != 0 || acc.Discarded != int64(len(tc.in))-want(tc.accepted) {
					t.Errorf("accounting %+v, want accepted %d of %d, pending 0", acc, want(tc.accepted), len(tc.in))
				}
				if tc.state == receipt.CapturePartial && acc.Discarded == 0 {
					t.Errorf("a stopped capture discarded nothing")
				}
				c.Publish(&receipt.Receipt{Schema: receipt.Schema})
			})
		}
	}
}

// TestOutcomeAccounting: the receipt's accounting of settled runs whose
// store stopped (SPEC §4 limits, a write error, a stalled writer, no
// capture) and of a redacted stream cut inside a marker's step, computed
// without a process.
func TestOutcomeAccounting(t *testing.T) {
	marker := rawMap{spans: []span{{r0: 100, r1: 110, o0: 100, o1: 116}}} // raw [100,110) → a 16-byte marker
	for _, tc := range []struct {
		name                          string
		observed, released, committed int64
		raw                           rawMap
		want                          receipt.Accounting
	}{
		{"complete", 500, 500, 500, rawMap{}, receipt.Accounting{Observed: 500, Accepted: 500}},
		{"complete, a marker 6 bytes longer", 500, 500, 506, marker, receipt.Accounting{Observed: 500, Accepted: 500}},
		{"write error after 300 bytes", 500, 500, 300, rawMap{}, receipt.Accounting{Observed: 500, Accepted: 300, Discarded: 200}},
		{"cut inside the marker's step", 500, 500, 108, marker, receipt.Accounting{Observed: 500, Accepted: 100, Discarded: 400}},
		{"cut after the marker", 500, 500, 216, marker, receipt.Accounting{Observed: 500, Accepted: 210, Discarded: 290}},
		{"no capture could be made", 500, 500, 0, rawMap{}, receipt.Accounting{Observed: 500, Discarded: 500}},
		{"held by the redactor (not settled)", 500, 480, 480, rawMap{}, receipt.Accounting{Observed: 500, Accepted: 480, Pending: 20}},
	} {
		if got := accounting(tc.observed, tc.released, tc.committed, tc.raw); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		} else if err := got.Check(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
