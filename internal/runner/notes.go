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
// store.Dir.ReadArg).
func notes(o *Outcome, cfg Config, dirArg string) []string {
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
	case receipt.ReasonDirectoryQuota:
		n = append(n, fmt.Sprintf("capwrap: the tool-outputs directory is full (--dir-quota %s): what came after is not kept; `%s --older-than 7d` frees space", text.Bytes(cfg.Limits.DirQuota), text.VerbCommand(dirArg, "prune")))
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
		fmt.Fprintf(&b, "; capwrap ended %s (SIGTERM, then SIGKILL --kill-after later); --leave-descendants leaves them running", it)
	}
	return b.String()
}
