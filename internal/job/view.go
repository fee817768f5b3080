package job

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/capwrap/capwrap/internal/guard"
	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/preview"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
)

// ExitHandedBack is capwrap's status when a job still runs at a hand-back
// (--background-after, `wait --timeout`): sysexits' EX_TEMPFAIL, "try again
// later" (SPEC §10), so that `capwrap --background-after 60s -- make &&
// deploy` does not deploy an unfinished build.
const ExitHandedBack = 75

// jobPoll is how often wait and stop look at a job's capture.
const jobPoll = 50 * time.Millisecond

// View is how the job verbs show a job: the preview budgets of its
// hand-back, where to print, and capwrap's voice.
type View struct {
	// Dir is the tool-outputs directory the job's captures are in, and
	// DirArg the --dir to name in read commands ("" when none is needed).
	Dir    *store.Dir
	DirArg string
	// StdoutChars, StderrChars and PreviewBytes bound a hand-back's
	// preview as a run's (SPEC §5).
	StdoutChars, StderrChars, PreviewBytes int
	// Mode is how a hand-back is printed (runner.ModeTee: one line on Stderr;
	// runner.ModeQuiet: the footer only; else the preview too).
	Mode           runner.Mode
	Stdout, Stderr io.Writer
	Diag           runner.Diag
	// Stall bounds each look at the tool-outputs directory (a hung file
	// system must not hold wait past its --timeout); 0: the default.
	Stall time.Duration
}

// share is the part of a job verb's output one job may have (issue 24):
// a run's bound (SPEC §5: 10,000 characters with the default budgets,
// viewBound) dealt out to the jobs of one call, so that `capwrap wait A B
// C` fits the harness's view as `capwrap -- make` does. The zero value is
// no share: one job, printed as it would be alone.
type share struct {
	chars int // characters of stdout this job may print, footer included
	jobs  int // how many jobs the call shows (2 or more)
}

// shared reports whether s bounds a job's output.
func (s share) shared() bool { return s.jobs > 1 }

// viewBound is the most characters a job verb prints on stdout in one
// call, all its jobs together: what one run prints at most (SPEC §5,
// runner.MaxPrinted, or the budgets' sum when the flags raise it).
func (v View) viewBound() int { return max(v.StdoutChars+v.StderrChars, runner.MaxPrinted) }

// dealer deals viewBound out to the jobs of one call in turn: each job an
// even part of what the jobs before it left, so that a job that printed
// little leaves more to the next. With one job it deals no share.
type dealer struct {
	left, jobs int // characters not yet printed; jobs not yet shown
	n          int // jobs in the call
}

func (v View) dealer(n int) *dealer { return &dealer{left: v.viewBound(), jobs: n, n: n} }

// next is the share of the next job.
func (d *dealer) next() share {
	if d.n <= 1 {
		return share{}
	}
	return share{chars: max(0, d.left) / max(1, d.jobs), jobs: d.n}
}

// rest is all that is left, for a job after which no other is shown (a
// hand-back ends wait).
func (d *dealer) rest() share {
	if d.n <= 1 {
		return share{}
	}
	return share{chars: max(0, d.left), jobs: d.n}
}

// printed records that a job printed chars characters.
func (d *dealer) printed(chars int) {
	d.left -= chars
	d.jobs--
}

// final prints what a foreground run would have printed for ended job e
// (its preview.txt and its receipt's footer) and returns the job's exit
// status, the signal to re-raise (SPEC §10: wait exits as the command) and
// the characters printed on stdout. Within share s, a preview.txt that
// does not fit with the footer is rendered again (sharedPreview).
func (v View) final(e store.Entry, s share) (int, syscall.Signal, int) {
	text, err := v.Dir.ReadPreview(e.ID)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		v.Diag.Warnf("cannot read the preview of %s: %v", e.ID, store.UnwrapPath(err))
	}
	rc := e.Receipt
	if rc == nil {
		v.Stdout.Write(text)
		v.Diag.Errorf("capture %s has no readable receipt: %v", e.ID, e.ReceiptErr)
		return runner.ExitUsage, 0, utf8.RuneCount(text)
	}
	footer, _ := rc.Footer(false)
	if s.shared() && utf8.RuneCount(text)+utf8.RuneCount(footer) > s.chars {
		text, footer = v.sharedPreview(e, s)
	}
	out := bufio.NewWriter(v.Stdout)
	out.Write(text)
	out.Write(footer)
	out.Flush()
	status := runner.ExitUsage
	if rc.ExitStatus != nil {
		status = *rc.ExitStatus
	} else {
		// A receipt without an end: a capture exported while it ran
		// (partial, exported_running) has nothing to wait for.
		v.Diag.Errorf("capture %s has no exit status (%s): its command had not ended when this receipt was written", e.ID, rc.Capture)
		status = 1
	}
	var sig syscall.Signal
	if p := rc.Process; p.Signal != nil && (p.State == receipt.ProcessSignaled || p.State == receipt.ProcessCancelled) {
		if s := signalNamed(*p.Signal); s != 0 && status == runner.ExitSignalBase+int(s) {
			sig = s
		}
	}
	return status, sig, utf8.RuneCount(text) + utf8.RuneCount(footer)
}

// sharedPreview is ended job e's preview and footer within share s
// (issue 24): the preview rendered again from its stream files (the .log
// files now) within what the footer leaves, with the error digest when
// the job failed, and one note naming the command that shows the job
// alone (`capwrap wait ID`: its preview.txt, with the notes on a timeout
// or a capture limit that this one leaves to the footer's states). The
// footer's preview states are this preview's. When even the markers do
// not fit, or the files cannot be read in time, a line naming that
// command stands for the preview, or nothing when that line does not fit
// either (about 30 jobs: the footers alone then fill the share).
func (v View) sharedPreview(e store.Entry, s share) (shown, footer []byte) {
	rc := *e.Receipt // a copy, whose previews become this one's
	p := rc.Process
	failed := p.State != receipt.ProcessExited || p.ExitCode == nil || *p.ExitCode != 0
	alone := text.VerbCommand(v.DirArg, "wait") + " " + e.ID
	room := s.chars - footerBound(rc)
	note := fmt.Sprintf("capwrap: preview shortened: %d jobs share this output; `%s` shows this one alone", s.jobs, alone)
	var rendered []byte
	var infos [2]preview.Info
	var err error
	// (rendered, infos and err are the hung read's until Do returns nil.)
	herr := guard.New(v.Stall).Do("reading the job's capture", func() {
		rendered, infos, err = v.render(e, v.scaled(room), failed, []string{note})
	}, nil)
	ok := herr == nil && err == nil && utf8.RuneCount(rendered) <= room
	if ok {
		shown = rendered
	} else {
		shown = fmt.Appendf(nil, "capwrap: preview of %s left out: %d jobs share this output; `%s` shows it\n", e.ID, s.jobs, alone)
		if utf8.RuneCount(shown) > room {
			shown = nil
		}
	}
	for i, st := range []*receipt.Stream{&rc.Streams.Stdout, &rc.Streams.Stderr} {
		in := preview.Info{State: preview.StateComplete}
		switch {
		case ok:
			in = infos[i]
		case st.CommittedBytes != nil && *st.CommittedBytes > 0: // left out whole
			in = preview.Info{State: preview.StateTruncated, OmittedBytes: *st.CommittedBytes}
			if st.Lines != nil {
				in.OmittedLines = *st.Lines
			}
		}
		st.Preview = &receipt.Preview{State: in.State, ShownBytes: in.ShownBytes, OmittedBytes: in.OmittedBytes, OmittedLines: in.OmittedLines}
	}
	footer, _ = rc.Footer(false)
	return shown, footer
}

// footerBound is the most characters rc's footer takes once a preview is
// rendered, both streams cut, and the line end before it.
func footerBound(rc receipt.Receipt) int {
	cut := receipt.Preview{State: preview.StateTruncated}
	rc.Streams.Stdout.Preview, rc.Streams.Stderr.Preview = &cut, &cut
	footer, _ := rc.Footer(false)
	return utf8.RuneCount(footer) + 1
}

// handBack prints the hand-back of running job e (SPEC §10): one line
// that says the command still runs (exit 75 is no failure: it must not be
// started again) and names the commands that wait for, follow and stop
// it, before anything else (issue 24: a harness flags 75 as an error, and
// a model that reads only that may start a second copy); then the preview
// of what its capture holds so far (text, from previewSoFar; nil when the
// capture could not be read in time) and its live receipt as footer
// (process.state running, exit_status null). In tee mode, where the
// output went by live, only the line is printed, on stderr; in quiet mode
// only the footer.
func (v View) handBack(e store.Entry, text []byte, after time.Duration) error {
	line := handBackLine(e.ID, v.DirArg, after)
	switch v.Mode {
	case runner.ModeTee:
		_, err := fmt.Fprintln(v.Stderr, line)
		return err
	case runner.ModeQuiet:
		text, line = nil, ""
	}
	out := bufio.NewWriter(v.Stdout)
	if line != "" {
		out.WriteString(line + "\n") // first: a reader that sees 75 and the start knows it runs
	}
	out.Write(text)
	dir := ""
	if v.Dir != nil { // nil when the tool-outputs directory hung
		dir = v.Dir.Path() + "/" + e.ID
	}
	out.Write(runningFooter(e, dir))
	return out.Flush()
}

// handBackReserve is what a hand-back prints besides its preview, at most:
// the line naming the commands and the running footer, in characters.
const handBackReserve = 900

// handBackLine names the commands that wait for, follow and stop job id.
func handBackLine(id, dirArg string, after time.Duration) string {
	return fmt.Sprintf("capwrap: still running, not failed: the command goes on in the background as job %s after %v; do not start it again. `%s --timeout 60s %s` waits for its end, `%s %s --follow --timeout 30s` follows it, `%s %s` stops it",
		id, after, text.VerbCommand(dirArg, "wait"), id, text.VerbCommand(dirArg, "read"), id, text.VerbCommand(dirArg, "stop"), id)
}

// runningFooter is the footer of running job e, whose capture directory
// is dir ("" when unknown): its live receipt with the sizes committed so far,
// exit_status null (the short footer names no file: the .live names it has
// now are renamed to .log when the job ends).
func runningFooter(e store.Entry, dir string) []byte {
	rc := e.LiveReceipt(dir)
	rc.ExitStatus = nil
	footer, _ := rc.Footer(false)
	return footer
}

// previewSoFar renders the preview (SPEC §5) of what running job e's
// stream files hold now, for a hand-back: within a run's bound less
// printed, the characters printed before it on the same output (the
// running notice of a --background-after run), or within share s when
// several jobs share the output (none when its markers alone do not fit);
// less the hand-back's line and footer.
func (v View) previewSoFar(e store.Entry, s share, printed int) ([]byte, error) {
	b := budgets{out: v.StdoutChars, err: v.StderrChars, bytes: max(1, v.PreviewBytes), chars: v.viewBound() - handBackReserve - printed}
	if s.shared() {
		b = v.scaled(s.chars - handBackReserve)
	}
	text, _, err := v.render(e, b, false, nil)
	if s.shared() && utf8.RuneCount(text) > s.chars-handBackReserve {
		text = nil
	}
	return text, err
}

// budgets are a preview's: characters of stdout and of stderr (0: none,
// only the marker), and ceilings in bytes and in characters on all of it
// (preview.Options).
type budgets struct{ out, err, bytes, chars int }

// scaled are View's budgets for a preview of at most chars characters,
// when several jobs share the output: the streams' budgets and
// PreviewBytes scaled down by chars over their sum (viewBound for the
// bytes), so that each stream keeps its part, and a budget that was not 0
// keeps 1 at least.
func (v View) scaled(chars int) budgets {
	chars = max(1, chars)
	b := budgets{out: v.StdoutChars, err: v.StderrChars, bytes: max(1, v.PreviewBytes), chars: chars}
	scale := func(n, of int) int {
		if n == 0 || chars >= of {
			return n
		}
		return max(1, int(int64(n)*int64(chars)/int64(of)))
	}
	sum := v.StdoutChars + v.StderrChars
	b.out, b.err, b.bytes = scale(b.out, sum), scale(b.err, sum), scale(b.bytes, v.viewBound())
	return b
}

// render renders the preview (SPEC §5) of job e's stream files as they
// are now (.live while it runs, .log once it has ended, as the markers
// name them) within b: each file is read once through a preview keeper,
// so memory is bounded by the budgets whatever the size. With failed,
// stdout's unused budget goes to stderr and a stream cut gets the error
// digest of what it left out, as in a failed run's preview (SPEC §5).
// notes come last (preview.Options.Notes).
func (v View) render(e store.Entry, b budgets, failed bool, notes []string) ([]byte, [2]preview.Info, error) {
	oc, ec := b.out, b.err
	var streams [2]preview.Stream
	for i, name := range []string{store.Stdout, store.Stderr} {
		chars := oc
		if i == 1 {
			chars += ec
		}
		k := preview.NewKeeper(chars)
		f, file, err := v.Dir.OpenStream(e.ID, name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, [2]preview.Info{}, err
		}
		if f != nil {
			_, err = io.Copy(k, f)
			f.Close()
			if err != nil {
				return nil, [2]preview.Info{}, err
			}
		} else {
			file = name + ".live"
		}
		cmd := text.VerbCommand(v.DirArg, "read") + " " + e.ID
		if name == store.Stderr {
			cmd += " --stream stderr"
		}
		streams[i] = preview.Stream{Keeper: k, Name: name, File: v.Dir.Path() + "/" + e.ID + "/" + file, ReadCmd: cmd}
	}
	// The hand-back's line and running footer, or a shared job's footer,
	// come after it: together within the bound of a run's output (SPEC §5).
	opt := preview.Options{StdoutChars: runner.Budget(oc), StderrChars: runner.Budget(ec), MaxBytes: b.bytes,
		MaxChars: max(1, b.chars), Failed: failed, Notes: notes}
	var infos [2]preview.Info
	var shown []byte
	shown, infos[0], infos[1] = preview.Render(streams[0], streams[1], opt)
	if failed && v.digests(e, &streams, infos) {
		shown, infos[0], infos[1] = preview.Render(streams[0], streams[1], opt)
	}
	return shown, infos, nil
}

// digests gives each stream of job e whose preview omitted a part the
// error digest of that part (SPEC §5), read back from its file; it reports
// whether one has lines to show. A stream that cannot be read gets none.
func (v View) digests(e store.Entry, streams *[2]preview.Stream, infos [2]preview.Info) bool {
	found := false
	for i, name := range []string{store.Stdout, store.Stderr} {
		in := infos[i]
		if in.OmittedBytes == 0 {
			continue
		}
		f, _, err := v.Dir.OpenStream(e.ID, name)
		if err != nil {
			continue
		}
		d, err := preview.ScanErrors(io.NewSectionReader(f, in.OmittedFrom, in.OmittedBytes), in.OmittedFrom, in.OmittedFrom+in.OmittedBytes, in.OmittedLine)
		f.Close()
		if err == nil && len(d.Lines) > 0 {
			streams[i].Digest = &d
			found = true
		}
	}
	return found
}

// Wait is `capwrap wait [--timeout D] ID...` (SPEC §10): for each job in
// turn it waits for the end and prints what a foreground run would have
// printed; with timeout > 0, a job still running then is handed back, and
// the jobs after it are not shown. Several jobs share the bound of one
// run's output (dealer), each printed within its share. It returns the
// last job's exit status (75 for a hand-back) and the signal to re-raise.
func Wait(v View, ids []string, timeout time.Duration) (int, syscall.Signal) {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	status, sig := 0, syscall.Signal(0)
	deal := v.dealer(len(ids))
	for _, id := range ids {
		e, err := v.awaitEnd(id, deadline)
		if err != nil {
			v.Diag.Errorf("wait %s: %v", id, store.UnwrapPath(err))
			return runner.ExitUsage, 0
		}
		if !e.Final {
			if e.Abandoned {
				v.Diag.Errorf("%s", endedText(e))
				return 1, 0
			}
			var text []byte
			if herr := guard.New(v.Stall).Do("reading the job's capture", func() { text, err = v.previewSoFar(e, deal.rest(), 0) }, nil); herr != nil {
				v.Diag.Warnf("capture %s: %v: no preview", id, herr)
			} else if err != nil {
				v.Diag.Warnf("capture %s: %v: no preview", id, store.UnwrapPath(err))
			}
			if err := v.handBack(e, text, timeout); err != nil {
				v.Diag.Errorf("wait %s: %v", id, err)
				return 1, 0
			}
			return ExitHandedBack, 0
		}
		var printed int
		status, sig, printed = v.final(e, deal.next())
		deal.printed(printed)
	}
	return status, sig
}

// awaitEnd polls capture id until it is final or abandoned, or deadline
// (zero: none) has passed.
func (v View) awaitEnd(id string, deadline time.Time) (store.Entry, error) {
	g := guard.New(v.Stall)
	for {
		var e store.Entry
		var err error
		if herr := g.Do("reading the tool-outputs directory", func() { e, err = v.Dir.Entry(id) }, nil); herr != nil {
			return e, herr
		}
		if err != nil || e.Final || e.Abandoned {
			return e, err
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return e, nil
		}
		time.Sleep(jobPoll)
	}
}

// Stop is `capwrap stop [--signal SIG] [--kill-after D] ID...` (SPEC §10):
// sig to each running job's process group through its supervisor (the
// job's parent, so a reused pid is never signalled), which sends SIGKILL
// killAfter later if it still runs (killAfter < 0: the stop gave none, and
// the job's launch-time --kill-after governs), then what wait prints. A
// job that has ended is shown and not signalled. Several jobs share the
// bound of one run's output, as in Wait. It returns 0 once every job has
// ended, like kill(1) and docker stop (the receipts carry the commands'
// own statuses), and the signal that ended the last job (0: none), which
// `stop --raise` re-raises.
func Stop(v View, ids []string, sig syscall.Signal, killAfter time.Duration) (int, syscall.Signal) {
	var last syscall.Signal
	deal := v.dealer(len(ids))
	for _, id := range ids {
		e, err := v.Dir.Entry(id)
		if err != nil {
			v.Diag.Errorf("stop %s: %v", id, store.UnwrapPath(err))
			return runner.ExitUsage, 0
		}
		if e.Running && !e.Final {
			if e, err = v.stopJob(e, stopRequest{sig: sig, killAfter: killAfter}); err != nil {
				return 1, 0
			}
		}
		if e.Abandoned {
			v.Diag.Warnf("%s", endedText(e))
			deal.printed(0)
			last = 0
			continue
		}
		_, s, printed := v.final(e, deal.next())
		last = s
		deal.printed(printed)
	}
	return 0, last
}

// stopJob sends request r to running job e's supervisor and waits for the
// job's end (its supervisor escalates). An error has been said.
func (v View) stopJob(e store.Entry, r stopRequest) (store.Entry, error) {
	id := e.ID
	reply, err := v.Dir.SendControl(id, r.String())
	switch {
	case errors.Is(err, store.ErrNotJob):
		// A job removes its socket once its receipt is published: one
		// that has ended meanwhile is shown as ended.
		if e2, err2 := v.Dir.Entry(id); err2 == nil && (e2.Final || e2.Abandoned) {
			return e2, nil
		}
		v.Diag.Errorf("capture %s is not a background job (its capwrap runs in the foreground): stop cannot reach it", id)
		v.Diag.Hintf("stop the capwrap that runs it, or its caller")
		return e, err
	case errors.Is(err, store.ErrNoSupervisor):
		// Its supervisor is ending with it, or was killed: nothing to signal.
	case err != nil:
		v.Diag.Errorf("stop %s: %v", id, err)
		return e, err
	case reply != "ok":
		err = fmt.Errorf("the job's supervisor refused the request: %s", strings.TrimPrefix(reply, "error "))
		v.Diag.Errorf("stop %s: %v", id, err)
		return e, err
	}
	if e, err = v.awaitEnd(id, time.Time{}); err != nil {
		v.Diag.Errorf("stop %s: %v", id, store.UnwrapPath(err))
		return e, err
	}
	return e, nil
}

// endedText says what became of job e, abandoned: its supervisor (a
// capwrap) was killed and the supervisor's watchdog ended the command
// (SPEC §3, store.Entry.KilledWithCapwrap), or the supervisor ended
// without a receipt and nobody knows.
func endedText(e store.Entry) string {
	if e.KilledWithCapwrap {
		return fmt.Sprintf("capture %s ended with its supervisor: the supervisor was killed while the command ran, and the command with it; the files hold what was committed", e.ID)
	}
	return fmt.Sprintf("capture %s was abandoned: its supervisor ended without a receipt", e.ID)
}

// signalNamed is the signal of a receipt's name ("SIGKILL"), or 0.
func signalNamed(name string) syscall.Signal {
	for s := syscall.Signal(1); s < 65; s++ {
		if runner.SignalName(s) == name {
			return s
		}
	}
	return 0
}

// readReceiptLine decodes the JSON of a launcher's "started" line.
func readReceiptLine(s string) (*receipt.Receipt, error) {
	var rc receipt.Receipt
	if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &rc); err != nil {
		return nil, err
	}
	return &rc, nil
}
