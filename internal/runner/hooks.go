package runner

import (
	"os"
	"syscall"

	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
)

// Hooks make a run a background job (SPEC §10) without the runner knowing
// jobs: package job implements them for a job's supervisor. The runner
// calls them in this order, each once; a run without Hooks is a
// foreground run.
type Hooks interface {
	// Signals returns the signals the job gets from elsewhere (capwrap
	// stop, a launcher gone), handled as if capwrap had received them.
	// Called before the spawn.
	Signals() <-chan os.Signal
	// Started is called once the command runs, with its pid, and its live
	// receipt rc written in capture c at once (both nil when the capture
	// could not be made: a job needs it, and stops the command through
	// Signals).
	Started(pid int, rc *receipt.Receipt, c *store.Capture)
	// Attached reports whether the run is still presented on the caller's
	// output (a launcher waiting: --background-after before its hand-back),
	// not let go of. It may be called at any time after Started, from
	// another goroutine (the running notice's timer, Config.NoticeAfter).
	Attached() bool
	// Exited is called when the command has ended and its streams are
	// drained, with the last signal forwarded to it; it says who sent that
	// signal through the job ("capwrap stop"), "" when the job did not.
	Exited(forwarded syscall.Signal) (from string)
	// Ending is called when the run begins to end; it reports whether the
	// run is presented on the caller's output (attached). A detached run
	// keeps its capture whatever --keep says, and its preview goes to
	// preview.txt, for capwrap wait.
	Ending() (attached bool)
	// Ended is called last, after an attached run was presented, with
	// capwrap's exit status and the signal it re-raises (0 for none).
	Ended(status int, reraise syscall.Signal)
}
