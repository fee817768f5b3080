package store

import (
	"fmt"
	"github.com/capwrap/capwrap/receipt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestEntryStatus(t *testing.T) {
	code, sig, reason := 3, "SIGKILL", receipt.ReasonCaptureLimit
	tests := []struct {
		e            Entry
		capture      string
		process      string
		code, signal string
	}{
		{Entry{Running: true}, "running", "running", "<nil>", "<nil>"},
		{Entry{Abandoned: true}, "partial (abandoned)", "unknown", "<nil>", "<nil>"},
		{Entry{Abandoned: true, KilledWithCapwrap: true}, "partial (killed_with_capwrap)", "unknown", "<nil>", "<nil>"},
		{Entry{Final: true}, "unknown", "unknown", "<nil>", "<nil>"},
		{Entry{Final: true, Receipt: &receipt.Receipt{Process: receipt.Process{State: "exited", ExitCode: &code}, Capture: receipt.Capture{State: receipt.CaptureComplete}}},
			"complete", "exited", "3", "<nil>"},
		{Entry{Final: true, Receipt: &receipt.Receipt{Process: receipt.Process{State: "signaled", Signal: &sig}, Capture: receipt.Capture{State: receipt.CapturePartial, Reason: &reason}}},
			"partial (capture_limit)", "signaled", "<nil>", "SIGKILL"},
	}
	str := func(p any) string {
		switch p := p.(type) {
		case *int:
			if p != nil {
				return fmt.Sprint(*p)
			}
		case *string:
			if p != nil {
				return *p
			}
		}
		return "<nil>"
	}
	for _, tt := range tests {
		state := tt.e.CaptureStatus().String()
		ps, c, s := tt.e.ProcessStatus()
		if state != tt.capture || string(ps) != tt.process || str(c) != tt.code || str(s) != tt.signal {
			t.Errorf("%+v: capture %q, process %q %s %s; want %q, %q %s %s", tt.e, state, ps, str(c), str(s), tt.capture, tt.process, tt.code, tt.signal)
		}
	}
	if got, want := (Entry{ID: "20261130T030612Z-k3j4h5g6x2"}).StartedAt(), time.Date(2026, 11, 30, 3, 6, 12, 0, time.UTC); !got.Equal(want) {
		t.Errorf("StartedAt = %v, want %v", got, want)
	}
	if got := (Entry{ID: "x"}).StartedAt(); !got.IsZero() {
		t.Errorf("StartedAt of a bad ID = %v, want the zero time", got)
	}
}

func TestEndedAt(t *testing.T) {
	now := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	d, c := newTestCapture(t)
	writeAll(c.Stream(Stdout), []byte("x"), 1)
	for c.Stream(Stdout).Committed() < 1 {
		time.Sleep(time.Millisecond)
	}
	e, err := d.Entry(c.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got := d.EndedAt(e, now); !got.Equal(now) {
		t.Errorf("running: EndedAt = %v, want now", got)
	}
	crash(c)
	mtime := time.Date(2030, 6, 7, 8, 9, 10, 0, time.UTC)
	if err := d.root.Chtimes(c.ID()+"/"+Stdout+liveSuffix, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if e, err = d.Entry(c.ID()); err != nil || !e.Abandoned {
		t.Fatalf("entry %+v, %v", e, err)
	}
	if got := d.EndedAt(e, now); !got.Equal(mtime) {
		t.Errorf("abandoned: EndedAt = %v, want the stream's mtime %v", got, mtime)
	}
	ended := "2030-01-01T00:00:00.5Z"
	e.Final, e.Abandoned, e.Receipt = true, false, &receipt.Receipt{EndedAt: &ended}
	if got := d.EndedAt(e, now); !got.Equal(time.Date(2030, 1, 1, 0, 0, 0, 5e8, time.UTC)) {
		t.Errorf("final: EndedAt = %v, want the receipt's ended_at", got)
	}
	bad := "yesterday"
	e.Receipt.EndedAt = &bad
	if got := d.EndedAt(e, now); !got.Equal(mtime) {
		t.Errorf("final with a bad ended_at: EndedAt = %v, want the stream's mtime", got)
	}
	e.ID = "20261130T030612Z-k3j4h5g6x2" // no such capture: no files, the start time
	if got := d.EndedAt(e, now); !got.Equal(e.StartedAt()) {
		t.Errorf("no files: EndedAt = %v, want the start %v", got, e.StartedAt())
	}
}

// TestListNewestFirstByStart: List orders by start time, the receipt's
// started_at (final or live) when it has one, else the ID's second; the
// greater ID first among equal times (issue 15). Not by ID: within one
// second, the IDs' random rest would order the captures at random.
func TestListNewestFirstByStart(t *testing.T) {
	d, _, err := Open(filepath.Join(t.TempDir(), "tool-outputs"), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, c := range []struct {
		id, file, started string // file "": no receipt
	}{
		{"20261130T030612Z-zzzzzzzzzz", receiptName, "2026-11-30T03:06:12.1Z"},
		{"20261130T030612Z-aaaaaaaaaa", liveReceiptName, "2026-11-30T03:06:12.9Z"},
		{"20261130T030612Z-mmmmmmmmmm", "", ""},
		{"20261130T030612Z-bbbbbbbbbb", receiptName, "yesterday"}, // unreadable: the ID's time
		{"20261130T030611Z-zzzzzzzzzz", receiptName, "2026-11-30T03:06:11.999999999Z"},
		{"20261130T030610Z-aaaaaaaaaa", receiptName, "2026-11-30T03:06:10.5Z"},
		{"20261130T030610Z-bbbbbbbbbb", receiptName, "2026-11-30T03:06:10.5Z"},
	} {
		dir := filepath.Join(d.Abs(), c.id)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if c.file == "" {
			continue
		}
		rc := fmt.Sprintf(`{"schema":"capwrap.receipt/v1","started_at":%q,"process":{"state":"exited"},"capture":{"state":"complete"}}`, c.started)
		if err := os.WriteFile(filepath.Join(dir, c.file), []byte(rc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.ID)
	}
	want := []string{
		"20261130T030612Z-aaaaaaaaaa", // 12.9, a live receipt
		"20261130T030612Z-zzzzzzzzzz", // 12.1
		"20261130T030612Z-mmmmmmmmmm", // 12.0 from the ID; ties broken by ID
		"20261130T030612Z-bbbbbbbbbb", // 12.0 from the ID
		"20261130T030611Z-zzzzzzzzzz", // 11.999999999
		"20261130T030610Z-bbbbbbbbbb", // 10.5, the greater ID first
		"20261130T030610Z-aaaaaaaaaa",
	}
	if !slices.Equal(got, want) {
		t.Errorf("List order\n got %q\nwant %q", got, want)
	}
	e := entries[0]
	if got, want := e.StartedAt(), time.Date(2026, 11, 30, 3, 6, 12, 9e8, time.UTC); !got.Equal(want) {
		t.Errorf("StartedAt from the live receipt = %v, want %v", got, want)
	}
}

// TestLiveReceipt: a running capture's receipt for show and a hand-back:
// its live receipt, or a running, pending one naming it, with the bytes
// committed so far and the file of each stream that has one.
func TestLiveReceipt(t *testing.T) {
	pid := 42
	live := &receipt.Receipt{Schema: receipt.Schema, Process: receipt.Process{State: receipt.ProcessRunning, PID: &pid}}
	out := FileEntry{Path: "tool-outputs/X/stdout.live", Name: "stdout.live", Size: 12, Live: true}
	for _, tc := range []struct {
		name string
		e    Entry
		pid  *int
	}{
		{"with its live receipt", Entry{ID: "X", Receipt: live, Stdout: out}, &pid},
		{"none yet", Entry{ID: "X", Stdout: out}, nil},
	} {
		rc := tc.e.LiveReceipt("tool-outputs/X")
		if rc.Process.State != receipt.ProcessRunning || rc.Process.PID != tc.pid || rc.ID == nil && tc.e.Receipt == nil {
			t.Errorf("%s: process %+v, id %v", tc.name, rc.Process, rc.ID)
		}
		if s := rc.Streams.Stdout; s.CommittedBytes == nil || *s.CommittedBytes != 12 || s.File == nil || *s.File != out.Path {
			t.Errorf("%s: stdout %+v", tc.name, s)
		}
		if s := rc.Streams.Stderr; s.CommittedBytes != nil || s.File != nil {
			t.Errorf("%s: stderr, which has no file, %+v", tc.name, s)
		}
	}
}

// TestKilledWithCapwrapEntry: the watchdog's note (KilledNote) turns an
// abandoned capture into one killed with capwrap; a running or final
// capture, or a note that is not a regular file, stays what it was. The
// note is charged to no quota, and prune removes the capture with it.
func TestKilledWithCapwrapEntry(t *testing.T) {
	note := func(t *testing.T, c *Capture) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(c.AbsPath(), KilledNote), []byte("SIGTERM\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		what  string
		setup func(t *testing.T, c *Capture)
		want  string
	}{
		{"no note", func(t *testing.T, c *Capture) { crash(c) }, "partial (abandoned)"},
		{"note", func(t *testing.T, c *Capture) { note(t, c); crash(c) }, "partial (killed_with_capwrap)"},
		{"note while running", func(t *testing.T, c *Capture) { note(t, c) }, "running"},
		{"note, then a receipt", func(t *testing.T, c *Capture) {
			note(t, c)
			if _, err := c.Finalize(); err != nil {
				t.Fatal(err)
			}
			if err := c.Publish(&receipt.Receipt{Schema: receipt.Schema, Capture: receipt.Capture{State: receipt.CaptureComplete}}); err != nil {
				t.Fatal(err)
			}
		}, "complete"},
		{"a directory at the note's name", func(t *testing.T, c *Capture) {
			if err := os.Mkdir(filepath.Join(c.AbsPath(), KilledNote), 0o700); err != nil {
				t.Fatal(err)
			}
			crash(c)
		}, "partial (abandoned)"},
		{"a symbolic link at the note's name", func(t *testing.T, c *Capture) {
			if err := os.Symlink(receiptName, filepath.Join(c.AbsPath(), KilledNote)); err != nil {
				t.Fatal(err)
			}
			crash(c)
		}, "partial (abandoned)"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			d, c := newTestCapture(t)
			writeAll(c.Stream(Stdout), []byte("out\n"), 4)
			for c.Stream(Stdout).Committed() < 4 {
				time.Sleep(time.Millisecond)
			}
			tc.setup(t, c)
			t.Cleanup(func() { c.Discard() })
			list, err := d.List()
			if err != nil || len(list) != 1 {
				t.Fatalf("List = %+v, %v", list, err)
			}
			e := list[0]
			if got := e.CaptureStatus().String(); got != tc.want {
				t.Errorf("capture %q, want %q (%+v)", got, tc.want, e)
			}
			if e.KilledWithCapwrap != (tc.want == "partial (killed_with_capwrap)") || e.KilledWithCapwrap && !e.Abandoned {
				t.Errorf("KilledWithCapwrap %v, Abandoned %v", e.KilledWithCapwrap, e.Abandoned)
			}
			if e.Running {
				return
			}
			d.quotaMu.Lock()
			used, err := d.usage("")
			d.quotaMu.Unlock()
			if err != nil || used != 4 {
				t.Errorf("ledger charges %d bytes (%v), want the stream's 4", used, err)
			}
			if err := d.Remove(c.ID()); err != nil {
				t.Errorf("prune: %v", err)
			}
			if list, err := d.List(); err != nil || len(list) != 0 {
				t.Errorf("after prune: %+v, %v", list, err)
			}
		})
	}
}

// TestStatusFinalWhileLocked: in the instant between receipt.json's
// publication and the release of the capture's lock, the capture is
// final: list and show (which prints receipt.json) say the receipt's
// states, not running (issue 26: one decision for both).
func TestStatusFinalWhileLocked(t *testing.T) {
	d := mustOpen(t, t.TempDir())
	c, err := d.Create(time.Now(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Discard()
	rc := `{"schema":"capwrap.receipt/v1","ended_at":"2026-11-30T03:06:13Z","process":{"state":"exited","exit_code":3},"capture":{"state":"complete","reason":null}}`
	if err := os.WriteFile(filepath.Join(c.AbsPath(), receiptName), []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := d.Entry(c.ID())
	if err != nil || !e.Running || !e.Final {
		t.Fatalf("entry %+v %v", e, err)
	}
	state, code, _ := e.ProcessStatus()
	if got := e.CaptureStatus().String(); got != "complete" || state != receipt.ProcessExited || code == nil || *code != 3 {
		t.Errorf("capture %s, process %s %v; want complete, exited 3", got, state, code)
	}
	if p := d.Presented(e, time.Now()); p == nil || p.EndedAt == nil || *p.EndedAt != "2026-11-30T03:06:13Z" {
		t.Errorf("presented %+v", p)
	}
}
