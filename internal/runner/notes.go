package runner

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/wrap"
)

// notes are the human lines of the preview (SPEC §5): one for each way the
// run ended early or the capture lost bytes, with what to do about it.
// dirArg is the --dir a later capwrap command needs ("" for none, see
// store.Dir.ReadArg); c is the run's capture, nil when none was made.
func notes(o *Outcome, cfg Config, dirArg string, c *store.Capture) []string {
	var n []string
	p := o.Process
	if p.TimedOut {
		how := "SIGTERM"
		if p.Signal == syscall.SIGKILL {
			how = fmt.Sprintf("SIGTERM, then SIGKILL %v later", cfg.KillAfter)
		}
		if p.WaitedForTerminal {
			n = append(n, fmt.Sprintf("capwrap: the command waited for the terminal (it read or set /dev/tty, a prompt) until --timeout %v ended it (%s); capwrap gives the terminal only to a command run from a shell or with stdin a terminal: give it its input on stdin or with a flag", cfg.Timeout, how))
		} else {
			n = append(n, fmt.Sprintf("capwrap: the command ran into --timeout %v and was ended (%s); raise --timeout, or run it with --background-after", cfg.Timeout, how))
		}
	} else if p.WaitedForTerminal {
		n = append(n, "capwrap: the command stopped to read or set the terminal (/dev/tty, a prompt), which capwrap gives only to a command run from a shell or with stdin a terminal: give it its input on stdin or with a flag")
	}
	if p.DrainTimedOut {
		n = append(n, fmt.Sprintf("capwrap: the command exited, but a process it started still held its output %v later (--drain-timeout): nothing it wrote after that was read", cfg.DrainTimeout))
	}
	cs := o.CaptureState()
	if cs.Reason == nil {
		return n
	}
	switch *cs.Reason {
	case receipt.ReasonCaptureLimit:
		n = append(n, fmt.Sprintf("capwrap: the capture stopped at --max-capture-bytes %s: what came after is not in its files", text.Bytes(cfg.Limits.MaxCaptureBytes)))
	case receipt.ReasonDirectoryQuota, receipt.ReasonDiskFull:
		n = append(n, fullNote(o, cfg, dirArg, c))
	case receipt.ReasonWriteError:
		why := "an error"
		if cs.Error != nil {
			why = *cs.Error
		}
		n = append(n, "capwrap: writing the capture failed ("+why+"): what came after is not kept")
	case receipt.ReasonWriterStalled:
		stall := cfg.Limits.StallTimeout
		if stall == 0 {
			stall = store.DefaultStallTimeout
		}
		n = append(n, fmt.Sprintf("capwrap: the disk under the tool-outputs directory made no progress for %v (--stall-timeout): what came after is not kept", stall.Round(time.Millisecond)))
	}
	return n
}

// fullNote is the line for a capture that stopped because the directory
// quota or the disk is full (issue 26), in plain words: what is full, how
// much of this run's output is kept and how much is not, and a remedy
// that works now: the `prune --keep-last N` that frees at least what was
// not kept, computed from the captures on disk (store.Dir.AdvisePrune),
// else raising --dir-quota or freeing the file system.
func fullNote(o *Outcome, cfg Config, dirArg string, c *store.Capture) string {
	var kept, lost int64
	observed := [2]int64{o.Process.ObservedStdout, o.Process.ObservedStderr}
	for i, r := range []store.StreamResult{o.Store.Stdout, o.Store.Stderr} {
		kept += r.Committed
		lost += max(observed[i]-r.Committed, 0)
	}
	quota := *o.CaptureState().Reason == receipt.ReasonDirectoryQuota
	what := "the file system that holds the tool-outputs directory is full (no space left on it)"
	if quota {
		what = fmt.Sprintf("the tool-outputs directory reached its quota (--dir-quota %s)", text.Bytes(cfg.Limits.DirQuota))
	}
	s := fmt.Sprintf("capwrap: %s: %s of this run's output is kept, the last %s is not; ", what, text.Bytes(kept), text.Bytes(lost))
	var advice store.PruneAdvice
	ok := false
	if c != nil {
		advice, ok = c.Dir().AdvisePrune(lost, c.ID())
	}
	switch {
	case ok && quota:
		return s + fmt.Sprintf("`%s --keep-last %d` frees %s (%d older capture%s), or raise --dir-quota", text.VerbCommand(dirArg, "prune"), advice.KeepLast, text.Bytes(advice.Frees), advice.Removes, text.Plural(advice.Removes))
	case ok:
		return s + fmt.Sprintf("`%s --keep-last %d` frees %s (%d older capture%s), or free space on that file system or give --dir another one", text.VerbCommand(dirArg, "prune"), advice.KeepLast, text.Bytes(advice.Frees), advice.Removes, text.Plural(advice.Removes))
	case quota:
		return s + fmt.Sprintf("no finished capture to prune would free that much: raise --dir-quota to more than %s", text.Bytes(cfg.Limits.DirQuota+lost))
	}
	return s + "no finished capture to prune would free that much: free space on that file system, or give --dir another one"
}

// descendantsShown is how many descendants the human line names; the
// receipt lists more (wrap.DescendantsListed).
const descendantsShown = 3

// descendantsLine is the one human line about the processes the command
// left running when it ended (SPEC §3, README "Process"): how many, the
// first few by pid and command line (the one holding a stream says so),
// "and N more", and whether capwrap ended them or left them running; ""
// when there were none.
func descendantsLine(p wrap.Result) string {
	if p.DescendantCount == 0 {
		return ""
	}
	var b strings.Builder
	noun, it := "processes", "them"
	if p.DescendantCount == 1 {
		noun, it = "process", "it"
	}
	fmt.Fprintf(&b, "the command left %d %s running:", p.DescendantCount, noun)
	shown := 0
	for _, d := range p.Descendants {
		// A holder of a stream is always named; others while room is left.
		if shown >= descendantsShown && d.Holds == "" {
			continue
		}
		if shown > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %d", d.PID)
		if d.Command != "" {
			b.WriteString(" " + d.Command)
		}
		if d.Holds != "" {
			b.WriteString(" (it held " + d.Holds + " open)")
		}
		shown++
	}
	if more := p.DescendantCount - shown; more > 0 {
		fmt.Fprintf(&b, " and %d more", more)
	}
	if p.DescendantsLeft {
		b.WriteString("; left running (--leave-descendants)")
	} else {
		fmt.Fprintf(&b, "; capwrap ended %s (SIGTERM, then SIGKILL --kill-after later); --leave-descendants leaves %s running", it, it)
	}
	return b.String()
}
