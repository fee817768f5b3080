package runner

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/capwrap/capwrap/preview"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/wrap"
)

// noticeCapture returns a capture in a new tool-outputs directory, both
// closed at the test's end, and a config with the default budgets.
func noticeCapture(t *testing.T) (*store.Capture, Config) {
	t.Helper()
	dir, _, err := store.Open(filepath.Join(t.TempDir(), "to"), true, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	c, err := dir.Create(time.Now(), store.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Discard() })
	return c, Config{StdoutChars: preview.DefaultStdoutChars, StderrChars: preview.DefaultStderrChars,
		PreviewBytes: preview.DefaultMaxBytes, Getenv: os.Getenv}
}

// TestRunningNotice: the running notice (SPEC §5: the ID before the end)
// is printed once, in preview mode only, never after the preview was
// rendered, and what it took is taken from the preview's bound: all that
// preview mode prints stays within MaxPrinted characters.
func TestRunningNotice(t *testing.T) {
	c, cfg := noticeCapture(t)

	var quiet bytes.Buffer
	(&footerPresenter{out: &quiet, cfg: cfg}).running(c, 5*time.Second)
	if quiet.Len() != 0 {
		t.Errorf("quiet mode printed a notice: %q", quiet.String())
	}
	var tee bytes.Buffer
	(&teePresenter{out: &tee, err: &tee}).running(c, 5*time.Second)
	if tee.Len() != 0 {
		t.Errorf("tee mode printed a notice: %q", tee.String())
	}

	var out bytes.Buffer
	p := &footerPresenter{out: &out, preview: true, cfg: cfg}
	p.running(c, 5*time.Second)
	p.running(c, 5*time.Second)
	if n := strings.Count(out.String(), "capwrap: still running after 5s, as capture "+c.ID()+";"); n != 1 {
		t.Fatalf("%d notices, want 1:\n%s", n, out.String())
	}
	// A failing run whose output is far over the budgets.
	keepers := [2]*preview.Keeper{preview.NewKeeper(cfg.StdoutChars), preview.NewKeeper(cfg.StdoutChars + cfg.StderrChars)}
	for i := 0; i < 20000; i++ {
		keepers[0].Write([]byte("a line of stdout, a line of stdout\n"))
		keepers[1].Write([]byte("a line of stderr, a line of stderr\n"))
	}
	o := &Outcome{Process: wrap.Result{State: wrap.StateExited, ExitCode: 1, PID: 4242}, Place: placeOf(c), Kept: true}
	p.render(o, c, keepers)
	p.running(c, 5*time.Second) // after render: nothing
	if err := p.present(o); err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCount(out.Bytes()); n > MaxPrinted {
		t.Errorf("notice, preview and footer: %d characters, want at most %d", n, MaxPrinted)
	}
	if n := strings.Count(out.String(), "still running"); n != 1 {
		t.Errorf("%d notices after render, want 1", n)
	}
}

// attachHooks are a job's Hooks whose Attached is what the test says.
type attachHooks struct {
	Hooks    // the rest is not called
	attached atomic.Bool
}

func (h *attachHooks) Attached() bool { return h.attached.Load() }

// TestJobRunningNotice: a job's run prints the running notice on the
// launcher's output as a foreground run does while it is attached
// (--background-after before the hand-back; issue 24), and nothing once
// let go of; what the notice took is accounted for when it ends attached.
func TestJobRunningNotice(t *testing.T) {
	c, cfg := noticeCapture(t)
	newJob := func(out io.Writer, h *attachHooks) *jobPresenter {
		return &jobPresenter{inner: &footerPresenter{out: out, preview: true, cfg: cfg},
			text: &footerPresenter{preview: true, cfg: cfg}, hooks: h}
	}

	var released bytes.Buffer
	h := &attachHooks{}
	newJob(&released, h).running(c, time.Second)
	if released.Len() != 0 {
		t.Errorf("a job let go of printed a notice: %q", released.String())
	}

	var out bytes.Buffer
	h.attached.Store(true)
	p := newJob(&out, h)
	p.running(c, time.Second)
	if !strings.HasPrefix(out.String(), "capwrap: still running after 1s, as capture "+c.ID()+";") {
		t.Fatalf("an attached job printed %q, want the notice", out.String())
	}
	keepers := [2]*preview.Keeper{preview.NewKeeper(cfg.StdoutChars), preview.NewKeeper(cfg.StdoutChars + cfg.StderrChars)}
	for i := 0; i < 20000; i++ {
		keepers[0].Write([]byte("a line of stdout, a line of stdout\n"))
		keepers[1].Write([]byte("a line of stderr, a line of stderr\n"))
	}
	o := &Outcome{Process: wrap.Result{State: wrap.StateExited, ExitCode: 1, PID: 4242}, Place: placeOf(c), Kept: true}
	p.attached = true // as the run ends attached
	p.render(o, c, keepers)
	if !o.Named {
		t.Error("the capture the notice named is not kept (Outcome.Named)")
	}
	if err := p.present(o); err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCount(out.Bytes()); n > MaxPrinted {
		t.Errorf("notice, preview and footer: %d characters, want at most %d", n, MaxPrinted)
	}
	if bytes.Contains(p.text.text, []byte("still running")) {
		t.Error("preview.txt's text has the notice")
	}
}

// TestSuccessBudget: a successful run's stream more than successFar times
// its budget is previewed with a fifth of the budget (SPEC §5: "may show
// less"); a smaller one, or a failure, keeps the whole budget.
func TestSuccessBudget(t *testing.T) {
	for _, tc := range []struct {
		budget int
		total  int64
		want   int
	}{
		{8000, 64000, 8000},
		{8000, 64001, 1600},
		{2000, 16001, 400},
		{0, 1 << 30, 0}, // no text asked for: still none
		{3, 1000, 1},
	} {
		if got := successBudget(tc.budget, tc.total); got != tc.want {
			t.Errorf("successBudget(%d, %d) = %d, want %d", tc.budget, tc.total, got, tc.want)
		}
	}

	c, cfg := noticeCapture(t)
	shown := func(exit int) int {
		k := preview.NewKeeper(cfg.StdoutChars)
		for i := 0; i < 5000; i++ {
			k.Write([]byte("a line of stdout, a line of stdout\n")) // 175,000 bytes
		}
		p := &footerPresenter{out: io.Discard, preview: true, cfg: cfg}
		o := &Outcome{Process: wrap.Result{State: wrap.StateExited, ExitCode: exit, PID: 4242}, Place: placeOf(c), Kept: true}
		p.render(o, c, [2]*preview.Keeper{k, preview.NewKeeper(cfg.StderrChars)})
		return int(o.Previews[0].ShownBytes)
	}
	if n := shown(0); n > 1600 || n < 1000 {
		t.Errorf("a large success shows %d bytes of stdout, want at most 1,600", n)
	}
	if n := shown(1); n < 7000 {
		t.Errorf("a large failure shows %d bytes of stdout, want its whole budget", n)
	}
}
