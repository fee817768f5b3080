package receipt

import (
	"strings"
	"testing"
)

func TestFooter(t *testing.T) {
	zero := 0
	r := &Receipt{Schema: Schema, ExitStatus: &zero, Process: Process{State: "exited", ExitCode: &zero}, Capture: Capture{State: CaptureComplete}}
	got, err := r.Footer(true)
	if err != nil {
		t.Fatal(err)
	}
	const want = `capwrap-receipt {"exit_status":0,"process":{"exit_code":0},"capture":{"state":"complete"}}` + "\n"
	if string(got) != want || len(got) >= 100 {
		t.Errorf("compact footer %q (%d bytes)", got, len(got))
	}
}

// TestShortFooter: the short form of SPEC §7 keeps what a caller acts on
// and leaves the rest to receipt.json; a failing run with both streams cut
// stays under 400 bytes.
func TestShortFooter(t *testing.T) {
	i := func(n int) *int { return &n }
	i64 := func(n int64) *int64 { return &n }
	str := func(s string) *string { return &s }
	id := "20261130T030612Z-k3j4h5g6x2"
	dir := "tool-outputs/" + id
	cut := func(committed, lines, omittedB, omittedL int64) Stream {
		return Stream{ObservedBytes: i64(committed), CommittedBytes: i64(committed), Lines: i64(lines),
			LastLinePartial: new(bool), File: str(dir + "/stdout.log"), SHA256: str(strings.Repeat("a", 64)),
			Preview: &Preview{State: "truncated", ShownBytes: 6000, OmittedBytes: omittedB, OmittedLines: omittedL}}
	}
	failing := &Receipt{Schema: Schema, ID: &id, Dir: &dir, AbsDir: str("/home/u/work/" + dir),
		Command: []string{"sh", "-c", strings.Repeat("x", 5000)}, StartedAt: str("2026-11-30T03:06:12Z"), EndedAt: str("2026-11-30T03:06:13Z"),
		DurationMS: i64(1000), ExitStatus: i(4), Process: Process{State: "exited", PID: i(123), ExitCode: i(4)},
		Capture:   Capture{State: CaptureComplete},
		Redaction: Redaction{Enabled: true, PerStream: map[string]int64{"stdout": 0, "stderr": 0}},
		Streams:   Streams{Stdout: cut(400000, 100000, 394000, 98500), Stderr: cut(400000, 100000, 398500, 99600)}}
	running := &Receipt{Schema: Schema, ID: &id, Dir: &dir, Process: Process{State: ProcessRunning, PID: i(77)},
		Capture: Capture{State: CapturePending}, Redaction: Redaction{Enabled: true}}
	partial := &Receipt{Schema: Schema, ID: &id, Dir: &dir, ExitStatus: i(137), Process: Process{State: "cancelled", Signal: str("SIGKILL"),
		Reason: str("SIGTERM received by capwrap and forwarded; SIGKILL after --kill-after 5s")},
		Capture:   Capture{State: CapturePartial, Reason: new(ReasonWriteError), Error: str("no space left on device")},
		Redaction: Redaction{Enabled: false, Replaced: 0},
		Streams:   Streams{Stdout: Stream{ObservedBytes: i64(5000), CommittedBytes: i64(4096), Lines: i64(3), Preview: &Preview{State: "truncated", OmittedBytes: 3000}}}}
	// Both streams cut and stopped at --max-capture-bytes: the
	// discarded counts go to receipt.json when the footer has no room.
	// (Even without them this footer is over 400 bytes: committed_bytes
	// on both streams, a partial capture; found so, not changed here.)
	limited := *failing
	limited.Capture = Capture{State: CapturePartial, Reason: new(ReasonCaptureLimit)}
	limited.Streams = Streams{Stdout: cut(400000, 100000, 394000, 98500), Stderr: cut(400000, 100000, 398500, 99600)}
	limited.Streams.Stdout.CommittedBytes, limited.Streams.Stderr.CommittedBytes = i64(200000), i64(0)
	limited.Streams.Stdout.Accounting = &Accounting{Observed: 400000, Accepted: 200000, Discarded: 200000}
	limited.Streams.Stderr.Accounting = &Accounting{Observed: 400000, Discarded: 400000}
	timedOut := limited // a breaker's case: --timeout 1s --max-capture-bytes 10K on seq 1 100000 and seq 1 10000 >&2
	timedOut.Streams = Streams{Stdout: cut(588895, 100000, 580000, 98000), Stderr: cut(48894, 10000, 46000, 9500)}
	timedOut.Streams.Stdout.CommittedBytes, timedOut.Streams.Stderr.CommittedBytes = i64(10240), i64(0)
	timedOut.Streams.Stdout.Accounting = &Accounting{Observed: 588895, Accepted: 10240, Discarded: 578655}
	timedOut.Streams.Stderr.Accounting = &Accounting{Observed: 48894, Discarded: 48894}
	timedOut.ExitStatus = i(124)
	timedOut.Process = Process{State: ProcessTimeout, Signal: str("SIGTERM"), Reason: str("timeout")}
	timedOut.Redaction = Redaction{Enabled: true, Replaced: 2}
	stopped := *failing
	stopped.Capture = limited.Capture
	stopped.Streams = Streams{Stdout: Stream{ObservedBytes: i64(3893), CommittedBytes: i64(1000), Lines: i64(1000),
		Accounting: &Accounting{Observed: 3893, Accepted: 1000, Discarded: 2893}, Representation: new(RepresentationRedactedText)}}
	oneCut := *failing
	oneCut.Streams = Streams{Stdout: cut(400000, 100000, 394000, 98500), Stderr: Stream{ObservedBytes: i64(30), CommittedBytes: i64(30), Lines: i64(1)}}
	left := &Receipt{Schema: Schema, ID: &id, Dir: &dir, ExitStatus: i(0), Process: Process{State: "exited", ExitCode: i(0)},
		Capture: Capture{State: CapturePartial, Reason: new(ReasonDrainTimeout)}, Redaction: Redaction{Enabled: true},
		Streams:     Streams{Stdout: Stream{ObservedBytes: i64(7), CommittedBytes: i64(7), Lines: i64(0)}},
		Descendants: &Descendants{Count: 1, Action: DescendantsEnded, Processes: []Descendant{{PID: 4242, Command: str("sleep 30"), Holds: str("stdout")}}}}
	// No room: the descendants are receipt.json's alone.
	bothCutLeft := *failing
	bothCutLeft.Descendants = &Descendants{Count: 12, Action: DescendantsLeft}
	for _, tc := range []struct {
		name string
		r    *Receipt
		want string
		max  int
	}{
		{"failing, stdout cut: what the preview omitted", &oneCut, `{"id":"20261130T030612Z-k3j4h5g6x2","dir":"tool-outputs/20261130T030612Z-k3j4h5g6x2","exit_status":4,"process":{"state":"exited","exit_code":4},"capture":{"state":"complete"},"streams":{"stdout":{"observed_bytes":400000,"lines":100000,"preview":{"state":"truncated","omitted_bytes":394000,"omitted_lines":98500}},"stderr":{"observed_bytes":30,"lines":1}}}`, 400},
		{"failing, both streams cut", failing, `{"id":"20261130T030612Z-k3j4h5g6x2","dir":"tool-outputs/20261130T030612Z-k3j4h5g6x2","exit_status":4,"process":{"state":"exited","exit_code":4},"capture":{"state":"complete"},"streams":{"stdout":{"observed_bytes":400000,"lines":100000,"preview":{"state":"truncated"}},"stderr":{"observed_bytes":400000,"lines":100000,"preview":{"state":"truncated"}}}}`, 400},
		{"stopped at the limit: the raw bytes discarded", &stopped, `{"id":"20261130T030612Z-k3j4h5g6x2","dir":"tool-outputs/20261130T030612Z-k3j4h5g6x2","exit_status":4,"process":{"state":"exited","exit_code":4},"capture":{"state":"partial","reason":"capture_limit"},"streams":{"stdout":{"observed_bytes":3893,"committed_bytes":1000,"lines":1000,"accounting":{"discarded":2893}}}}`, 400},
		{"timed out at the capture limit: reason at its default, no redaction count, no committed sizes", &timedOut, `{"id":"20261130T030612Z-k3j4h5g6x2","dir":"tool-outputs/20261130T030612Z-k3j4h5g6x2","exit_status":124,"process":{"state":"timeout","signal":"SIGTERM"},"capture":{"state":"partial","reason":"capture_limit"},"streams":{"stdout":{"observed_bytes":588895,"lines":100000,"preview":{"state":"truncated"}},"stderr":{"observed_bytes":48894,"lines":10000,"preview":{"state":"truncated"}}}}`, 400},
		{"stopped, both streams cut: no room for the counts", &limited, `{"id":"20261130T030612Z-k3j4h5g6x2","dir":"tool-outputs/20261130T030612Z-k3j4h5g6x2","exit_status":4,"process":{"state":"exited","exit_code":4},"capture":{"state":"partial","reason":"capture_limit"},"streams":{"stdout":{"observed_bytes":400000,"lines":100000,"preview":{"state":"truncated"}},"stderr":{"observed_bytes":400000,"lines":100000,"preview":{"state":"truncated"}}}}`, 400},
		{"descendants left behind: count and action, the list in receipt.json", left, `{"id":"20261130T030612Z-k3j4h5g6x2","dir":"tool-outputs/20261130T030612Z-k3j4h5g6x2","exit_status":0,"process":{"state":"exited","exit_code":0},"capture":{"state":"partial","reason":"drain_timeout"},"streams":{"stdout":{"observed_bytes":7,"lines":0}},"descendants":{"count":1,"action":"ended"}}`, 400},
		{"descendants with both streams cut: no room, left out", &bothCutLeft, `{"id":"20261130T030612Z-k3j4h5g6x2","dir":"tool-outputs/20261130T030612Z-k3j4h5g6x2","exit_status":4,"process":{"state":"exited","exit_code":4},"capture":{"state":"complete"},"streams":{"stdout":{"observed_bytes":400000,"lines":100000,"preview":{"state":"truncated"}},"stderr":{"observed_bytes":400000,"lines":100000,"preview":{"state":"truncated"}}}}`, 400},
		{"running (launch, hand-back)", running, `{"id":"20261130T030612Z-k3j4h5g6x2","dir":"tool-outputs/20261130T030612Z-k3j4h5g6x2","exit_status":null,"process":{"state":"running","pid":77},"capture":{"state":"pending"}}`, 400},
		{"cancelled, partial, redaction off, cut in a line", partial, `{"id":"20261130T030612Z-k3j4h5g6x2","dir":"tool-outputs/20261130T030612Z-k3j4h5g6x2","exit_status":137,"process":{"state":"cancelled","signal":"SIGKILL","reason":"SIGTERM received by capwrap and forwarded; SIGKILL after --kill-after 5s"},"capture":{"state":"partial","reason":"write_error","error":"no space left on device"},"redaction":{"enabled":false},"streams":{"stdout":{"observed_bytes":5000,"committed_bytes":4096,"lines":3,"preview":{"state":"truncated"}}}}`, 600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.r.Footer(false)
			if err != nil {
				t.Fatal(err)
			}
			if want := FooterPrefix + tc.want + "\n"; string(got) != want {
				t.Errorf("footer\n%s\nwant\n%s", got, want)
			}
			if len(got) >= tc.max {
				t.Errorf("footer is %d bytes, want under %d", len(got), tc.max)
			}
		})
	}
}

// TestCaptureString: the capture's state as people read it, with its
// reason when there is one.
func TestCaptureString(t *testing.T) {
	for _, tc := range []struct {
		c    Capture
		want string
	}{
		{Capture{State: CaptureComplete}, "complete"},
		{Capture{State: CapturePartial, Reason: new(ReasonAbandoned)}, "partial (abandoned)"},
		{Capture{State: CapturePartial, Reason: new(ReasonKilledWithCapwrap)}, "partial (killed_with_capwrap)"},
		{Capture{State: CaptureFailed, Reason: new(ReasonWriteError)}, "failed (write_error)"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

// TestCheck: the accounting identity of SPEC §7, and committed bytes equal
// to the accepted ones where nothing was replaced.
func TestCheck(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	stream := func(observed, committed int64, a Accounting, rep Representation) Stream {
		return Stream{ObservedBytes: i64(observed), CommittedBytes: i64(committed), Accounting: &a, Representation: &rep}
	}
	for _, tc := range []struct {
		name     string
		s        Stream
		replaced int64
		ok       bool
	}{
		{"complete", stream(10, 10, Accounting{Observed: 10, Accepted: 10}, RepresentationRedactedText), 0, true},
		{"expanded by a marker", stream(10, 19, Accounting{Observed: 10, Accepted: 10}, RepresentationRedactedText), 1, true},
		{"stopped", stream(10, 4, Accounting{Observed: 10, Accepted: 4, Discarded: 6}, RepresentationRaw), 0, true},
		{"no accounting (a live receipt)", Stream{ObservedBytes: i64(3)}, 0, true},
		{"identity broken", stream(10, 10, Accounting{Observed: 10, Accepted: 9}, RepresentationRedactedText), 0, false},
		{"negative", stream(10, 10, Accounting{Observed: 10, Accepted: 11, Pending: -1}, RepresentationRedactedText), 0, false},
		{"observed_bytes disagrees", stream(11, 10, Accounting{Observed: 10, Accepted: 10}, RepresentationRedactedText), 0, false},
		{"nothing replaced, committed differs", stream(10, 12, Accounting{Observed: 10, Accepted: 10}, RepresentationBinary), 0, false},
		{"raw, committed differs", stream(10, 12, Accounting{Observed: 10, Accepted: 10}, RepresentationRaw), 0, false},
	} {
		r := &Receipt{Redaction: Redaction{Enabled: true, PerStream: map[string]int64{"stdout": tc.replaced, "stderr": 0}}, Streams: Streams{Stdout: tc.s}}
		if err := r.Check(); (err == nil) != tc.ok {
			t.Errorf("%s: Check() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
