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

// final prints what a foreground run would have printed for ended job e
// (its preview.txt and its receipt's footer) and returns the job's exit
// status and the signal to re-raise (SPEC §10: wait exits as the command).
func (v View) final(e store.Entry) (int, syscall.Signal) {
	text, err := v.Dir.ReadPreview(e.ID)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		v.Diag.Warnf("cannot read the preview of %s: %v", e.ID, store.UnwrapPath(err))
	}
	out := bufio.NewWriter(v.Stdout)
	out.Write(text)
	rc := e.Receipt
	if rc == nil {
		v.Diag.Errorf("capture %s has no readable receipt: %v", e.ID, e.ReceiptErr)
		return runner.ExitUsage, 0
	}
	footer, _ := rc.Footer(false)
	out.Write(footer)
	out.Flush()
	status := runner.ExitUsage
	if rc.ExitStatus != nil {
		status = *rc.ExitStatus
	}
	var sig syscall.Signal
	if p := rc.Process; p.Signal != nil && (p.State == receipt.ProcessSignaled || p.State == receipt.ProcessCancelled) {
		if s := signalNamed(*p.Signal); s != 0 && status == runner.ExitSignalBase+int(s) {
			sig = s
		}
	}
	return status, sig
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

// previewSoFar renders the preview (SPEC §5) of what job e's stream files
// hold now: each file is read once through a preview keeper, so memory is
// bounded by the budgets whatever the size.
func (v View) previewSoFar(e store.Entry) ([]byte, error) {
	var streams [2]preview.Stream
	for i, name := range []string{store.Stdout, store.Stderr} {
		chars := v.StdoutChars
		if i == 1 {
			chars += v.StderrChars
		}
		k := preview.NewKeeper(chars)
		f, _, err := v.Dir.OpenStream(e.ID, name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if f != nil {
			_, err = io.Copy(k, f)
			f.Close()
			if err != nil {
				return nil, err
			}
		}
		cmd := text.VerbCommand(v.DirArg, "read") + " " + e.ID
		if name == store.Stderr {
			cmd += " --stream stderr"
		}
		streams[i] = preview.Stream{Keeper: k, Name: name, File: v.Dir.Path() + "/" + e.ID + "/" + name + ".live", ReadCmd: cmd}
	}
	// The hand-back's line and running footer come after it: together
	// within the bound of a run's output (SPEC §5).
	text, _, _ := preview.Render(streams[0], streams[1], preview.Options{StdoutChars: runner.Budget(v.StdoutChars),
		StderrChars: runner.Budget(v.StderrChars), MaxBytes: max(1, v.PreviewBytes),
		MaxChars: max(v.StdoutChars+v.StderrChars, runner.MaxPrinted) - handBackReserve})
	return text, nil
}

// Wait is `capwrap wait [--timeout D] ID...` (SPEC §10): for each job in
// turn it waits for the end and prints what a foreground run would have
// printed; with timeout > 0, a job still running then is handed back. It
// returns the last job's exit status (75 for a hand-back) and the signal
// to re-raise.
func Wait(v View, ids []string, timeout time.Duration) (int, syscall.Signal) {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	status, sig := 0, syscall.Signal(0)
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
			if herr := guard.New(v.Stall).Do("reading the job's capture", func() { text, err = v.previewSoFar(e) }, nil); herr != nil {
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
		status, sig = v.final(e)
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
// job's parent, so a reused pid is never signalled), SIGKILL killAfter
// later if it still runs, then what wait prints. A job that has ended is
// shown and not signalled. It returns 0 once every job has ended, like
// kill(1) and docker stop; the receipts carry the commands' own statuses.
func Stop(v View, ids []string, sig syscall.Signal, killAfter time.Duration) int {
	status := 0
	for _, id := range ids {
		e, err := v.Dir.Entry(id)
		if err != nil {
			v.Diag.Errorf("stop %s: %v", id, store.UnwrapPath(err))
			return runner.ExitUsage
		}
		if e.Running && !e.Final {
			err := v.Dir.SendControl(id, fmt.Sprintf("signal %d", int(sig)))
			switch {
			case errors.Is(err, store.ErrNotJob):
				v.Diag.Errorf("capture %s is not a background job (its capwrap runs in the foreground): stop cannot reach it", id)
				v.Diag.Hintf("stop the capwrap that runs it, or its caller")
				return 1
			case errors.Is(err, store.ErrNoSupervisor):
				// Its supervisor is ending with it: nothing to signal.
			case err != nil:
				v.Diag.Errorf("stop %s: %v", id, err)
				return 1
			}
			if e, err = v.awaitEnd(id, time.Now().Add(killAfter)); err == nil && !e.Final && !e.Abandoned {
				v.Dir.SendControl(id, fmt.Sprintf("signal %d", int(syscall.SIGKILL)))
				e, err = v.awaitEnd(id, time.Time{})
			}
			if err != nil {
				v.Diag.Errorf("stop %s: %v", id, store.UnwrapPath(err))
				return 1
			}
		}
		if e.Abandoned {
			v.Diag.Warnf("%s", endedText(e))
			continue
		}
		v.final(e)
	}
	return status
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
