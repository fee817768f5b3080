package runner

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"

	"github.com/capwrap/capwrap/internal/events"
	"github.com/capwrap/capwrap/internal/guard"
	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/preview"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/wrap"
)

// presenter is how a run is shown (SPEC §2): preview, tee or quiet. The
// run never asks which one it has.
type presenter interface {
	// live returns the destination of stream i (0 stdout, 1 stderr) on
	// capwrap's own output while the child runs, or nil.
	live(i int) io.Writer
	// render is called once the run has settled, before the --keep
	// decision: the preview renders its text and records each stream's
	// preview summary in o.
	render(o *Outcome, c *store.Capture, keepers [2]*preview.Keeper)
	// present prints what follows the run, after receipt.json (SPEC §4);
	// it returns capwrap's own failure to print, if any.
	present(o *Outcome) error
	// running is called, from a timer, when the command still runs
	// Config.NoticeAfter after its start, with its capture (SPEC §5: the
	// ID before the end); it may be called after render, and then does
	// nothing.
	running(c *store.Capture, after time.Duration)
}

// newPresenter returns the presenter of mode (ModeAuto resolved already).
func newPresenter(mode Mode, cfg Config) presenter {
	switch mode {
	case ModeTee:
		return &teePresenter{out: cfg.Stdout, err: cfg.Stderr, d: cfg.Diag,
			lives: [2]*liveWriter{{w: cfg.Stdout}, {w: cfg.Stderr}}}
	case ModeQuiet:
		return &footerPresenter{out: cfg.Stdout}
	}
	return &footerPresenter{out: cfg.Stdout, preview: true, cfg: cfg}
}

// ChooseMode resolves ModeAuto (SPEC §2): tee when a person is at a
// terminal, i.e. stdout is one, or stdin and stderr both are (`capwrap
// make | grep error`, `X=$(capwrap ...)` at a prompt: the stream is what
// the pipe wants, not a preview); else preview (agents, CI; a harness whose
// shell runs in a pty sets CAPWRAP_PREVIEW=1).
func ChooseMode(m Mode, stdin, stdout, stderr *os.File) Mode {
	if m != ModeAuto {
		return m
	}
	if isatty.IsTerminal(stdout.Fd()) || (isatty.IsTerminal(stdin.Fd()) && isatty.IsTerminal(stderr.Fd())) {
		return ModeTee
	}
	return ModePreview
}

// footerPresenter prints, after the run, the preview (preview mode) and
// the receipt footer (preview and quiet modes) on capwrap's stdout. In
// preview mode a run still going after Config.NoticeAfter first gets the
// running notice.
type footerPresenter struct {
	out     io.Writer
	preview bool
	cfg     Config
	text    []byte

	sections [2][2]int       // each stream's section in text
	infos    [2]preview.Info // each stream's preview summary

	mu       sync.Mutex // the notice's timer against render
	rendered bool
	noticed  int // characters of the running notice printed, line end included
}

func (p *footerPresenter) live(int) io.Writer { return nil }

// running prints, in preview mode, one line that names the capture and the
// commands that wait for it and read it, so that a harness that kills
// capwrap at its time limit, or moves it to the background, still shows
// where the output goes (SPEC §5; issue 24). Its characters are taken from
// the preview's bound, and the capture is kept (Outcome.Named) whatever
// --keep auto would say; with --keep never there is none to name.
func (p *footerPresenter) running(c *store.Capture, after time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.preview || p.rendered || p.noticed > 0 || p.cfg.Keep == Never {
		return // (never: the capture it would name goes at the end)
	}
	line := NoticeLine(c.ID(), c.Dir().ReadArg(p.cfg.Getenv), after) + "\n"
	if _, err := io.WriteString(p.out, line); err == nil {
		p.noticed = utf8.RuneCountInString(line)
	}
}

// NoticeLine is the running notice of capture id, without its line end,
// after the command ran for after; dirArg is the --dir later commands
// need ("" for none, see store.Dir.ReadArg). A job's launcher measures it
// too: the notice its supervisor printed comes before the hand-back.
func NoticeLine(id, dirArg string, after time.Duration) string {
	return fmt.Sprintf("capwrap: still running after %v, as capture %s; should this call end first, `%s %s` waits for it and `%s %s` reads what it printed",
		after, id, text.VerbCommand(dirArg, "wait"), id, text.VerbCommand(dirArg, "read"), id)
}

func (p *footerPresenter) render(o *Outcome, c *store.Capture, keepers [2]*preview.Keeper) {
	p.mu.Lock()
	p.rendered = true
	noticed := p.noticed
	p.mu.Unlock()
	o.Named = noticed > 0
	if !p.preview {
		return
	}
	committed := [2]int64{o.Store.Stdout.Committed, o.Store.Stderr.Committed}
	dirArg := p.cfg.Dir
	if c != nil {
		dirArg = c.Dir().ReadArg(p.cfg.Getenv)
	}
	streams := [2]preview.Stream{
		p.stream(c, store.Stdout, keepers[0], committed[0]),
		p.stream(c, store.Stderr, keepers[1], committed[1]),
	}
	oc, ec := p.cfg.StdoutChars, p.cfg.StderrChars
	if !o.Failed() {
		oc, ec = successBudget(oc, keepers[0].Total()), successBudget(ec, keepers[1].Total())
	}
	opt := preview.Options{StdoutChars: Budget(oc), StderrChars: Budget(ec),
		MaxBytes: max(1, p.cfg.PreviewBytes), Failed: o.Failed(), Notes: notes(o, p.cfg, dirArg, c),
		MaxChars: max(p.cfg.StdoutChars+p.cfg.StderrChars, MaxPrinted) - footerBound(o, c) - noticed}
	var infos [2]preview.Info
	p.text, infos[0], infos[1], p.sections = preview.RenderSections(streams[0], streams[1], opt)
	if o.Failed() && c != nil && p.digests(c, &streams, infos) {
		// Again, with the error digests after the markers: the streams'
		// text gives way to them.
		p.text, infos[0], infos[1], p.sections = preview.RenderSections(streams[0], streams[1], opt)
	}
	p.infos = infos
	o.Previews = [2]*preview.Info{&infos[0], &infos[1]}
}

// finals are how each stream's live view ends (SPEC §12): its section of
// the preview rendered, and what that leaves out.
func (p *footerPresenter) finals() [2]events.Final {
	var f [2]events.Final
	for i, s := range p.sections {
		f[i] = events.Final{Text: string(p.text[s[0]:s[1]]), OmittedBytes: p.infos[i].OmittedBytes, OmittedLines: p.infos[i].OmittedLines}
	}
	return f
}

// successBudget is the preview budget, in characters, of a stream of a
// successful run that wrote total bytes, given its budget: a fifth of it
// when the stream is more than successFar times the budget (SPEC §5: "a
// successful run whose output is far beyond them may show less"). An
// agent that reads such output looks for something in it with the
// marker's read command, and the head and tail it was shown are mostly
// cost: 1,600 characters instead of 8,000 by default (issue 24: the
// cheapest harness shows about 2 KB of a saved output).
func successBudget(budget int, total int64) int {
	if budget > 0 && total > successFar*int64(budget) {
		return max(budget/5, 1)
	}
	return budget
}

// successFar is how many times its budget a successful stream's bytes must
// be for the smaller preview.
const successFar = 8

// digests gives each stream of a failed run whose preview omitted a part
// the error digest of that part (SPEC §5), read back from capture c's
// file (its committed bytes), under the store's stall timeout; it reports
// whether one has lines to show. A stream that cannot be read gets none.
func (p *footerPresenter) digests(c *store.Capture, streams *[2]preview.Stream, infos [2]preview.Info) bool {
	found := false
	g := guard.New(p.cfg.Limits.StallTimeout)
	for i, name := range []string{store.Stdout, store.Stderr} {
		in := infos[i]
		if in.OmittedBytes == 0 {
			continue
		}
		from, to := in.OmittedFrom, in.OmittedFrom+in.OmittedBytes
		if st := streams[i]; st.FileShort {
			to = min(to, st.FileBytes)
		}
		if to <= from {
			continue
		}
		var d preview.Digest
		var err error
		if herr := g.Do("reading the capture back for the error digest", func() {
			var f *os.File
			if f, _, err = c.Dir().OpenStream(c.ID(), name); err != nil {
				return
			}
			defer f.Close()
			d, err = preview.ScanErrors(io.NewSectionReader(f, from, to-from), from, to, in.OmittedLine)
		}, nil); herr != nil || err != nil {
			continue
		}
		if len(d.Lines) > 0 {
			streams[i].Digest = &d
			found = true
		}
	}
	return found
}

// ReadPage is the most bytes one `capwrap read` prints by default (its
// --limit): the preview's omission markers promise no more per read.
const ReadPage = preview.DefaultReadLimit

// MaxPrinted is the most characters capwrap prints in preview mode with
// the default budgets, preview, markers, notes and footer together (SPEC
// §5): what fits the views of the harnesses that cut longer tool results.
// Larger budgets raise it to their sum.
const MaxPrinted = 10000

// footerBound is the longest the footer of o can be once the preview is
// rendered: with the capture named and both streams cut.
func footerBound(o *Outcome, c *store.Capture) int {
	b := *o
	b.Kept = c != nil
	if c != nil {
		b.Place = placeOf(c)
	}
	cut := preview.Info{State: preview.StateTruncated}
	b.Previews = [2]*preview.Info{&cut, &cut}
	footer, _ := b.Receipt().Footer(false)
	return len(footer) + 1 // and the line end before it, when nothing else is printed
}

// stream names a stream's file and read-back command for the preview's
// omission marker, and how much of the stream the file holds (committed
// bytes, after redaction, like the keeper's). Without a capture there is
// nothing to name or read back. The command names the tool-outputs
// directory when the user chose it, and when capwrap fell back to the
// state directory (SPEC §4), where a plain `capwrap read` would not look.
func (p *footerPresenter) stream(c *store.Capture, name string, k *preview.Keeper, committed int64) preview.Stream {
	st := preview.Stream{Keeper: k, Name: name}
	if c != nil {
		cmd := text.VerbCommand(c.Dir().ReadArg(p.cfg.Getenv), "read") + " " + c.ID()
		if name == store.Stderr {
			cmd += " --stream stderr"
		}
		st.File, st.ReadCmd = c.FilePath(name), cmd
	}
	if committed < k.Total() {
		st.FileShort, st.FileBytes = true, committed
	}
	return st
}

func (p *footerPresenter) present(o *Outcome) error {
	footer, _ := o.Receipt().Footer(o.CompactFooter())
	out := bufio.NewWriterSize(p.out, 32<<10)
	out.Write(p.text)
	if len(p.text) == 0 {
		// Nothing before it: the footer still starts a line of its own,
		// after whatever the caller printed in front of capwrap's output
		// (a harness's "Output: ") (SPEC §7).
		out.WriteByte('\n')
	}
	out.Write(footer)
	if err := out.Flush(); err != nil && !errors.Is(err, syscall.EPIPE) {
		return fmt.Errorf("%w: %v", errPreview, err)
	}
	return nil
}

// Budget passes a preview budget (characters) to preview.Render, which reads 0 as "the
// default" and a negative value as "none": on capwrap's command line 0
// means none (--stdout-chars 0 shows no stdout text, only the marker).
func Budget(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// teePresenter copies both streams live to capwrap's stdout and stderr,
// then prints the one-line summary on stderr (SPEC §2 tee mode).
type teePresenter struct {
	out, err io.Writer
	d        Diag
	lives    [2]*liveWriter
}

func (p *teePresenter) live(i int) io.Writer                                { return p.lives[i] }
func (p *teePresenter) render(*Outcome, *store.Capture, [2]*preview.Keeper) {}
func (p *teePresenter) running(*store.Capture, time.Duration)               {} // the output shows by itself

func (p *teePresenter) present(o *Outcome) error {
	var failed error
	for _, l := range p.lives {
		l.flush()
	}
	for _, l := range p.lives {
		if l.err != nil && !errors.Is(l.err, syscall.EPIPE) {
			p.d.Warnf("cannot write live output: %v", l.err)
			failed = l.err
		}
	}
	// The summary starts a line of its own: after output that did not
	// end one, and after a Ctrl-C, whose ^C the terminal echoed.
	if p.lives[0].midLine || p.lives[1].midLine || o.Process.Signal == syscall.SIGINT || o.Process.Forwarded == syscall.SIGINT {
		fmt.Fprintln(p.err)
	}
	printSummary(p.err, o.Receipt(), o.Process, o.Kept)
	return failed
}

// setupColor decides colour for capwrap's stderr summary. fatih/color looks
// at stdout, which carries the child's data here, so the decision is made
// from stderr: --color, NO_COLOR, TERM=dumb (STYLE.md pitfalls).
func setupColor(flag When, getenv func(string) string, stderr *os.File) {
	color.NoColor = !colorEnabled(flag, getenv, isatty.IsTerminal(stderr.Fd()))
}

// colorEnabled is the colour decision: --color always or never wins;
// auto colours only a terminal stderr, and not when NO_COLOR is set to
// anything non-empty (no-color.org) or TERM is dumb.
func colorEnabled(flag When, getenv func(string) string, stderrTerminal bool) bool {
	switch flag {
	case Always:
		return true
	case Never:
		return false
	}
	return stderrTerminal && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// printSummary is tee mode's one line after the child's output (SPEC §2):
// status, duration, sizes, capture state and where the files are.
func printSummary(w io.Writer, rc *receipt.Receipt, res wrap.Result, kept bool) {
	fmt.Fprintln(w, summaryLine(rc, res, kept))
}

// summaryLine is printSummary's line, painted, without the newline (so the
// colour reset comes before it). Green for success, red for failure,
// yellow for a success whose capture is not complete; no colour unless
// setupColor allowed it.
func summaryLine(rc *receipt.Receipt, res wrap.Result, kept bool) string {
	var status string
	paint := color.New(color.FgGreen)
	switch {
	case res.State == wrap.StateNotStarted && errors.Is(res.StartErr, wrap.ErrCancelled):
		status, paint = "cancelled by "+SignalName(res.Forwarded)+" before the start", color.New(color.FgRed)
	case res.State == wrap.StateNotStarted:
		status, paint = "not started", color.New(color.FgRed)
	case res.TimedOut:
		status, paint = "timed out", color.New(color.FgRed)
		if rc.Process.Signal != nil {
			status += " (" + *rc.Process.Signal + ")"
		}
	case res.Signal != 0:
		status, paint = "killed by "+SignalName(res.Signal), color.New(color.FgRed)
	case res.ExitCode != 0:
		status, paint = fmt.Sprintf("exit %d", res.ExitCode), color.New(color.FgRed)
	default:
		status = "exit 0"
	}
	capState := rc.Capture.String()
	if rc.Capture.Reason != nil && status == "exit 0" {
		paint = color.New(color.FgYellow)
	}
	where := "not kept"
	if kept && rc.Dir != nil {
		where = *rc.Dir
	}
	dur := time.Duration(0)
	if rc.DurationMS != nil {
		dur = time.Duration(*rc.DurationMS) * time.Millisecond
	}
	line := fmt.Sprintf("capwrap: %s · %s · stdout %s, stderr %s · %s · %s",
		status, dur.Round(time.Millisecond), text.Bytes(deref(rc.Streams.Stdout.CommittedBytes)),
		text.Bytes(deref(rc.Streams.Stderr.CommittedBytes)), capState, where)
	if color.NoColor {
		return line
	}
	// color.New consults NO_COLOR itself; setupColor has already decided
	// (--color always beats NO_COLOR), so override it here.
	paint.EnableColor()
	return paint.Sprint(line)
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// jobPresenter presents a job's run: on the launcher's output as a
// foreground run would be while attached; detached, the preview is
// rendered for preview.txt, which `capwrap wait` prints.
type jobPresenter struct {
	inner    presenter        // the run's own presentation, on the launcher's output
	text     *footerPresenter // the preview for preview.txt
	hooks    Hooks            // the job's, for Attached
	attached bool             // set when the run began to end
}

func (p *jobPresenter) live(i int) io.Writer { return p.inner.live(i) }

// running prints the running notice as a foreground run's presentation
// would (SPEC §5; issue 24: a harness that kills `capwrap
// --background-after 10m` at its own limit of 2 minutes showed nothing),
// on the launcher's output while the run is attached to it; once let go
// of, the job's hand-back or launch receipt names it, and nothing is
// printed. A release between the check and the line sends the line to
// /dev/null (Supervisor.letGo), after nothing the launcher prints.
func (p *jobPresenter) running(c *store.Capture, after time.Duration) {
	if p.hooks.Attached() {
		p.inner.running(c, after)
	}
}

func (p *jobPresenter) render(o *Outcome, c *store.Capture, keepers [2]*preview.Keeper) {
	p.text.render(o, c, keepers) // preview.txt, for capwrap wait
	if p.attached {
		p.inner.render(o, c, keepers) // what the launcher's caller sees now
	}
}

func (p *jobPresenter) present(o *Outcome) error {
	if p.attached {
		return p.inner.present(o)
	}
	return nil
}
