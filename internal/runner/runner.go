package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/capwrap/capwrap/internal/events"
	"github.com/capwrap/capwrap/internal/guard"
	"github.com/capwrap/capwrap/internal/sigcatch"
	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/preview"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/redact"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/wrap"
)

// liveReceiptDelay is how long after the spawn receipt.live.json is written
// (SPEC §4 "at launch") for a command that has printed: its capture exists
// already. A command that has ended and been drained by then needs none:
// its receipt.json follows at once, or nothing is kept, and the fsync a
// live receipt costs (about 1 ms here) would double what a quick
// "capwrap -- true" adds. The capture's lock tells it is running meanwhile.
// A variable for the tests.
var liveReceiptDelay = 25 * time.Millisecond

// liveReceiptSilentDelay is how long after the spawn receipt.live.json is
// written for a command that has printed nothing yet: writing it creates
// the capture, its directory and files, and compiles the redaction policy
// for the label, about 5 ms of CPU and an fsync, which a busy machine's
// "capwrap -- true" (past 25 ms there) paid for nothing (issue 28: +33 ms
// median at load 13). Nothing is lost meanwhile: a command killed with
// capwrap before it printed left no output to report. A variable for the
// tests.
var liveReceiptSilentDelay = 250 * time.Millisecond

// liveReceiptsDeferred counts the live receipts put off because their
// command had printed nothing at liveReceiptDelay (tests read it).
var liveReceiptsDeferred atomic.Int64

// liveReceipt is the timer of a foreground run's receipt.live.json: at
// liveReceiptDelay if the command has printed by then, else at its first
// byte after that (made) or at liveReceiptSilentDelay, whichever comes
// first.
type liveReceipt struct {
	mu      sync.Mutex
	timer   *time.Timer
	silent  bool          // the first stage found no capture and put it off
	stopped bool          // stop was called: write nothing more
	writing chan struct{} // non-nil once the write has begun; closed when it ends
}

// startLiveReceipt arms the live receipt of the child pid.
func (r *run) startLiveReceipt(pid int) *liveReceipt {
	l := &liveReceipt{}
	fire := func() {
		l.mu.Lock()
		if l.stopped || l.writing != nil {
			l.mu.Unlock()
			return
		}
		if !l.silent {
			if c, _ := r.lazy.made(); c == nil {
				l.silent = true
				liveReceiptsDeferred.Add(1)
				l.timer.Reset(max(liveReceiptSilentDelay-liveReceiptDelay, 0))
				l.mu.Unlock()
				return
			}
		}
		done := make(chan struct{})
		l.writing = done
		l.mu.Unlock()
		defer close(done)
		r.writeLiveReceipt(pid)
	}
	l.mu.Lock() // fire reads l.timer
	l.timer = time.AfterFunc(liveReceiptDelay, fire)
	l.mu.Unlock()
	return l
}

// made tells the live receipt that the capture now exists (the command's
// first byte): one put off for want of output is written now.
func (l *liveReceipt) made() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.silent && !l.stopped && l.writing == nil {
		l.timer.Reset(0)
	}
}

// stop disarms the live receipt and returns the channel that closes when a
// write already begun ends, or nil when none has begun (none will).
func (l *liveReceipt) stop() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	l.timer.Stop()
	return l.writing
}

// Run runs cfg.Argv under capwrap, SPEC §2–§7 end to end, and returns the
// outcome. Diagnostics go to cfg.Diag; main exits with o.ExitStatus(),
// after re-raising o.Reraise() when that is not 0.
func Run(cfg Config) *Outcome {
	catchWriteSignals()
	if cfg.PassThrough {
		return passThrough(cfg)
	}
	// The watchdog's helper starts while prepare runs (see
	// startWatchdog), before the command all the same (spawn waits for it).
	wd := startWatchdog(cfg)
	r, err := prepare(cfg)
	if err != nil {
		wd.discard(cfg)
		return &Outcome{Refused: err}
	}
	defer r.closeDir()
	r.spawn(wd)
	if err := r.settle(); err != nil {
		return &Outcome{Refused: err}
	}
	r.publish()
	r.closeOutputIfHung()
	return &r.out
}

// closeOutputIfHung closes capwrap's stdout and stderr, once everything is
// printed, when the store hung: the kernel itself may then hold capwrap's
// exit until the file system answers (a file open on a hung FUSE or NFS
// mount is flushed at exit, and that wait cannot be interrupted), but a
// caller reading capwrap's output sees its end, the receipt last, at once.
func (r *run) closeOutputIfHung() {
	if r.guard.Failed() != nil {
		r.cfg.Stdout.Close()
		r.cfg.Stderr.Close()
	}
}

// run is one run in progress: what prepare set up, and the outcome that
// the later steps fill in.
type run struct {
	cfg     Config
	d       Diag
	present presenter
	policy  *lazyPolicy // compiled when first needed
	dir     *store.Dir
	lazy    *lazyCapture
	live    atomic.Pointer[liveReceipt] // a foreground run's, once its command has started
	keepers [2]*preview.Keeper
	sinks   [2]*sink
	pty     wrap.PTYMode      // the streams that are ptys (--pty)
	tty     *os.File          // the controlling terminal, for job control; nil if none
	guard   *guard.Guard      // bounds every step of the store (hung file systems)
	wd      *wrap.Watchdog    // set by spawn before the child starts; nil without one
	job     *jobPresenter     // a background job's presentation (cfg.Hooks), or nil
	events  *events.Publisher // --events (SPEC §12), or nil
	signals <-chan os.Signal  // the job's signals from elsewhere (stop, a launcher gone)
	out     Outcome
}

// catchWriteSignals makes a closed stdout give EPIPE instead of killing
// capwrap (SPEC §2), and a file-size limit give EFBIG (SPEC §4). Catching,
// not ignoring, keeps the child's own dispositions at their defaults. It
// catches from the first run on, for the rest of the process: each change
// of what is caught is a round trip to the Go runtime's signal-mask
// thread, a thread switch or two on the path of every run, and a process
// whose run has returned only prints and exits.
var catchWriteSignals = sync.OnceFunc(func() {
	c := make(chan os.Signal, 8)
	signal.Notify(c, syscall.SIGPIPE, syscall.SIGXFSZ)
	go func() {
		for range c {
		}
	}()
})

// prepare checks everything that can refuse the run, before the command
// starts and before anything is created (SPEC §3: exit 125), and builds
// each stream's pipeline: redactor → {capture file, preview keeper, live
// terminal in tee mode}. The redactor is the seam of SPEC §6: every later
// stage sees only sanitized bytes. A refusal has been reported.
func prepare(cfg Config) (*run, error) {
	d := cfg.Diag
	mode := ChooseMode(cfg.Mode, cfg.Stdin, cfg.Stdout, cfg.Stderr)
	setupColor(cfg.Color, cfg.Getenv, cfg.Stderr)
	r := &run{cfg: cfg, d: d, present: newPresenter(mode, cfg)}
	if cfg.Hooks != nil {
		r.job = &jobPresenter{inner: r.present, text: &footerPresenter{preview: true, cfg: cfg}, hooks: cfg.Hooks}
		r.present = r.job
		r.signals = cfg.Hooks.Signals()
	}
	r.out = Outcome{Launched: time.Now(), Redacting: !cfg.Redaction.Off, Strict: cfg.Strict}
	r.guard = guard.New(cfg.Limits.StallTimeout)
	var err error
	if r.policy, err = newLazyPolicy(cfg.Redaction, cfg.Environ); err != nil {
		d.Errorf("%v", err)
		if h := hintOf(err); h != "" {
			d.Hintf("%s", h)
		}
		return nil, err
	}
	if r.pty, err = choosePTY(cfg.PTY, mode, [2]bool{isatty.IsTerminal(cfg.Stdout.Fd()), isatty.IsTerminal(cfg.Stderr.Fd())}, d); err != nil {
		d.Errorf("%v", err)
		return nil, err
	}
	r.out.PTY = r.pty != wrap.PTYNone
	r.tty = openJobTTY(mode, cfg.Stdin, cfg.Stderr)
	if r.dir, err = r.openDir(); err != nil {
		return nil, err
	}
	r.lazy = &lazyCapture{started: time.Now(), warnf: d.Warnf, guard: r.guard,
		onMade: func() {
			if l := r.live.Load(); l != nil {
				l.made()
			}
		},
		create: func() (*store.Capture, error) {
			if r.dir == nil {
				return nil, r.guard.Failed()
			}
			c, err := r.dir.Create(time.Now(), cfg.Limits)
			if err == nil {
				// Should capwrap die while the command runs, its
				// watchdog notes in the capture that it ended the
				// command (SPEC §3), so that list, show and read say
				// so. Nothing to do once the watchdog is disarmed, and
				// a helper gone can note nothing either way.
				_ = r.wd.NoteTo(c.AbsPath(), store.KilledNote)
				if cfg.Keep != Never {
					// Kept, or likely kept: a large output is no
					// compact success (--keep auto).
					c.SyncAhead()
				}
			}
			return c, err
		},
		onError: func(err error) {
			if r.dir != nil { // else openDir has said why
				d.Warnf("cannot create a capture in %s: %v; the command runs on without one", r.dir.Path(), store.UnwrapPath(err))
			}
		}}
	if cfg.Events != nil {
		r.events = events.New(cfg.Events, events.Options{Chars: [2]int{Budget(cfg.StdoutChars), Budget(cfg.StderrChars)},
			Capture: func() string {
				if c, _ := r.lazy.made(); c != nil {
					return c.Path()
				}
				return ""
			}})
	}
	r.keepers = [2]*preview.Keeper{
		preview.NewKeeper(cfg.StdoutChars),
		preview.NewKeeper(cfg.StdoutChars + cfg.StderrChars), // stdout's unused budget may flow here (SPEC §5)
	}
	// The two streams share what they found: a secret stdout revealed is
	// masked in stderr from then on, and the other way round (SPEC §6).
	mem := redact.NewMemory()
	for i, name := range []string{store.Stdout, store.Stderr} {
		// The live copy first, as tee(1) writes its stdout before its
		// files: a person sees a chunk without waiting for its write to
		// disk (nor, at the first byte, for the capture's creation).
		var ws []io.Writer
		l := r.present.live(i)
		if l != nil {
			ws = append(ws, l)
		}
		file := r.lazy.stream(name)
		ws = append(ws, file, r.keepers[i])
		if r.events != nil {
			ws = append(ws, r.events.Stream(i))
		}
		r.sinks[i] = &sink{dst: io.MultiWriter(ws...), ready: r.policy.get, mem: mem, file: file}
		r.sinks[i].live, _ = l.(*liveWriter)
	}
	return r, nil
}

// openGrace is the longest the command's start waits for the tool-outputs
// directory to be opened and checked (or --stall-timeout, if shorter). A
// directory that has not answered by then is on a hung file system: the
// command starts without a capture rather than wait for it (SPEC §3: the
// store never holds the command hostage). Half the default stall timeout:
// at 1 s, a busy machine (40 runs at once on 2 cores, load 20) was taken
// for a hung file system, and the runs lost their captures.
const openGrace = 5 * time.Second

// openDir opens the tool-outputs directory (SPEC §4), or says why it
// cannot be used and what to do. A directory that does not answer within
// openGrace (a hung file system) is not waited for: the command then runs
// without a capture, and the store is taken as hung.
func (r *run) openDir() (*store.Dir, error) {
	cfg, d := r.cfg, r.d
	path, chosen := store.Locate(cfg.Dir, cfg.Getenv)
	var dir *store.Dir
	var warnings []string
	var err error
	if herr := r.guard.Within(min(openGrace, r.guard.Stall()), "opening the tool-outputs directory", func() {
		dir, warnings, err = store.Open(path, chosen, cfg.Getenv)
	}, func() {
		if dir != nil {
			dir.Close()
		}
	}); herr != nil {
		if cfg.Hooks != nil {
			// A job without a capture could be neither waited for nor
			// stopped: refused before it starts.
			d.Errorf("tool-outputs directory %s: %v; a background job needs its capture", path, herr)
			return nil, herr
		}
		d.Warnf("tool-outputs directory %s: %v; the command runs without a capture", path, herr)
		return nil, nil
	}
	if err != nil {
		d.Errorf("cannot use tool-outputs directory %s: %v", path, err)
		switch {
		case cfg.DirFromFlag:
			d.Hintf("give --dir a directory you own (or a path where capwrap may create one)")
		case chosen:
			d.Hintf("point CAPWRAP_DIR at a directory you own, or pass --dir")
		default:
			d.Hintf("pass --dir or set CAPWRAP_DIR to a directory you own")
		}
		return nil, err
	}
	for _, w := range warnings {
		d.Warnf("%s", w)
	}
	return dir, nil
}

// closeDir closes the tool-outputs directory, unless the store hung, and
// the terminal job control used.
func (r *run) closeDir() {
	if r.tty != nil {
		r.tty.Close()
	}
	if r.dir != nil {
		r.guard.Do("closing the tool-outputs directory", func() { r.dir.Close() }, nil)
	}
}

// spawn runs the child through wrap until it has ended and its streams are
// drained, under a watchdog that ends the child's group should capwrap die
// meanwhile (SPEC §3) and notes that in the capture once there is one,
// writing the live receipt shortly after the start. It waits for the
// watchdog's helper (pending) to be started, or to have failed, before
// anything else: the helper exists before the command does.
func (r *run) spawn(pending *pendingWatchdog) {
	cfg := r.cfg
	wd, err := pending.get()
	if err != nil {
		r.d.Warnf("cannot start the watchdog (%v): should capwrap be killed, the command would outlive it", err)
	}
	waitForWatchdog(wd, cfg.Getenv)
	r.wd = wd // before any goroutine that may create the capture starts
	var live *liveReceipt
	var noticeTimer *time.Timer
	r.out.Process = wrap.Run(wrap.Config{
		Watchdog:     wd,
		Args:         cfg.Argv,
		Env:          cfg.Environ,
		Stdin:        cfg.Stdin,
		StdoutMark:   EnvNested,
		Stdout:       r.streamWriter(0),
		Stderr:       r.streamWriter(1),
		Timeout:      cfg.Timeout,
		KillAfter:    cfg.KillAfter,
		DrainTimeout: cfg.DrainTimeout,
		TTY:          r.tty,
		Foreground:   aloneAtKeyboard(cfg),
		PTY:          r.pty,
		Caught:       sigcatch.C(),
		Signals:      r.signals,
		OnStart: func(pid int) {
			if cfg.Hooks != nil {
				// A job's capture and live receipt are made at once:
				// the launcher and capwrap stop need them.
				rc, c := r.writeLiveReceipt(pid)
				cfg.Hooks.Started(pid, rc, c)
			} else {
				live = r.startLiveReceipt(pid)
				r.live.Store(live)
			}
			// A job's run too, while attached (jobPresenter.running):
			// a harness that kills the launcher of --background-after
			// before its hand-back must still show where the output is.
			if cfg.NoticeAfter > 0 {
				noticeTimer = time.AfterFunc(cfg.NoticeAfter, func() {
					// The capture is made now if no byte and no live
					// receipt has made it yet (a start slowed by a busy
					// machine, a policy still compiling): the notice
					// must not be skipped for want of it.
					if c, err := r.lazy.get(); c != nil && err == nil {
						r.present.running(c, cfg.NoticeAfter)
					}
				})
			}
		},
		LeaveDescendants: cfg.LeaveDescendants,
	})
	if noticeTimer != nil {
		noticeTimer.Stop()
	}
	if cfg.Hooks != nil {
		r.out.SignalFrom = cfg.Hooks.Exited(r.out.Process.Forwarded)
	}
	if live != nil {
		if written := live.stop(); written != nil {
			// Before the capture is finalized or discarded.
			r.guard.Do("writing the live receipt", func() { <-written }, nil)
		}
	}
}

// writeLiveReceipt writes receipt.live.json (SPEC §4) for the child pid,
// creating the capture if no byte has done so yet, and returns both (nil
// when the capture could not be made). It runs while the child does, from
// a value of its own; its label compiles the policy if nothing has yet.
func (r *run) writeLiveReceipt(pid int) (*receipt.Receipt, *store.Capture) {
	var label []string
	if !r.cfg.NoLabel {
		policy, err := r.policy.get()
		if err != nil {
			return nil, nil // reported when the command has ended
		}
		label = policy.Label(r.cfg.Argv, nil)
	}
	c, err := r.lazy.get()
	if err != nil {
		return nil, nil // reported by lazy
	}
	live := Outcome{Running: true, Launched: r.out.Launched, Redacting: r.out.Redacting, PTY: r.out.PTY,
		Process: wrap.Result{PID: pid}, Place: placeOf(c), Label: label}
	rc := live.Receipt()
	if err := c.WriteLiveReceipt(rc); err != nil {
		r.d.Warnf("cannot write %s: %v", c.Path()+"/receipt.live.json", err)
	}
	return rc, c
}

// settle gathers the outcome once the streams have ended: what the
// redactors held back is released, the capture drained (not yet fsynced:
// it may be discarded), the preview rendered, --keep decided and the label
// sanitized. The error, already reported, is a policy that failed to
// compile, which refuses the run.
func (r *run) settle() error {
	for _, s := range r.sinks {
		s.Close() // end of stream: release what the redactor held back
	}
	if r.sinks[0].started() || r.sinks[1].started() {
		// The policy was needed: one that failed has refused the
		// run before anything else is said of it.
		if _, err := r.settledPolicy(); err != nil {
			return err
		}
	}
	o := &r.out
	var aerr error
	if herr := r.guard.Do("closing the arrival index", func() { aerr = r.lazy.closeArrival() }, nil); herr == nil && aerr != nil {
		r.d.Warnf("arrival order of %s: %v", r.lazy.id(), aerr)
	}
	if o.Process.StartErr != nil && !o.cancelledBeforeStart() {
		// The error names the command, which may hold a secret: the
		// message and the receipt's process.reason are sanitized.
		policy, err := r.settledPolicy()
		if err != nil {
			return err
		}
		var sanitized error = errors.New(sanitize(policy, o.Process.StartErr.Error()))
		if se := (*wrap.StartError)(nil); errors.As(o.Process.StartErr, &se) {
			sanitized = &wrap.StartError{Kind: se.Kind, Err: sanitized} // not found or not executable still
		}
		r.d.Errorf("%s", sanitize(policy, startErrorText(r.cfg.Argv[0], o.Process)))
		o.Process.StartErr = sanitized
	}
	// The command lines of the processes the command left running are
	// sanitized as its own label is, and made display-safe, for the human
	// line and the receipt: a process chooses its own name.
	if len(o.Process.Descendants) > 0 {
		policy, err := r.settledPolicy()
		if err != nil {
			return err
		}
		for i, d := range o.Process.Descendants {
			o.Process.Descendants[i].Command = displayCommand(sanitize(policy, d.Command))
		}
	}
	if line := descendantsLine(o.Process); line != "" {
		r.d.Warnf("%s", line)
	}
	for i, s := range r.sinks {
		released, raw, valid := s.ledger.facts()
		o.Streams[i] = StreamFacts{Lines: r.keepers[i].Lines(), LastLinePartial: r.keepers[i].LastLinePartial(), Replaced: s.replaced(),
			Released: released, Raw: raw, ValidUTF8: valid}
	}
	// A capture not made yet saw no byte: it is complete and empty.
	o.Store = store.Result{State: receipt.CaptureComplete}
	c, cerr := r.lazy.made()
	switch {
	case c != nil:
		o.Place = placeOf(c)
		var res store.Result
		if herr := r.guard.Do("writing the capture", func() { res = c.Drain() }, nil); herr != nil {
			res = c.Stalled(herr)
		}
		o.Store = res
	case cerr != nil:
		o.Store = notMade(cerr)
	}
	keep := r.cfg.Keep
	if r.job != nil {
		if r.job.attached = r.cfg.Hooks.Ending(); !r.job.attached {
			keep = Always // for capwrap wait (SPEC §10)
		}
	}
	r.present.render(o, c, r.keepers)
	if o.WantKeep(keep) && c == nil && cerr == nil {
		// Kept though nothing was printed: made now, empty.
		if c, cerr = r.lazy.get(); c != nil {
			o.Place = placeOf(c)
		} else {
			o.Store = notMade(cerr)
		}
	}
	o.Kept = c != nil && o.WantKeep(keep)
	if !r.cfg.NoLabel && r.labelled() {
		policy, err := r.settledPolicy()
		if err != nil {
			return err
		}
		o.Label = policy.Label(r.cfg.Argv, append(r.sinks[0].seen(), r.sinks[1].seen()...))
	}
	return nil
}

// labelled reports whether a receipt that carries the command's label
// (SPEC §7 "command") will be written once the run has settled: the
// receipt.json of a kept capture, --receipt-file, the last line of
// --events. The footer, compact or not, and tee mode's summary carry none
// (receipt.Footer), so a silent compact success needs no policy.
func (r *run) labelled() bool {
	return r.out.Kept || r.cfg.ReceiptFile != "" || r.events != nil
}

// settledPolicy is the policy for settle, compiled now if nothing needed
// it yet. A failure (not expected: CheckPatterns has passed, and the sinks
// wrote nothing) is reported and the capture removed: it refuses the run.
func (r *run) settledPolicy() (*redact.Policy, error) {
	policy, err := r.policy.get()
	if err != nil {
		if c, _ := r.lazy.made(); c != nil {
			r.guard.Do("removing the capture", func() { c.Discard() }, nil)
		}
		r.d.Errorf("%v", err)
	}
	return policy, err
}

// publish ends the run in SPEC §4's order: stream files flushed, fsynced,
// closed and renamed to .log, then --receipt-file, then receipt.json, then
// what the presenter prints; a capture not kept is removed instead. Each
// failure of capwrap's own is warned about and recorded in the outcome, so
// the receipts emitted after it say so under --strict.
func (r *run) publish() {
	o, c := &r.out, r.capture()
	if o.Kept {
		var fin store.Result
		var err error
		if herr := r.guard.Do("finalizing the capture", func() { fin, err = c.Finalize() }, nil); herr != nil {
			fin, err = c.Stalled(herr), nil
		}
		if err != nil {
			r.d.Warnf("finalizing capture %s: %v", c.ID(), err)
		}
		o.Store = fin
	}
	if o.OwnFailure() {
		kept := "its status is capwrap's"
		if r.cfg.Strict {
			kept = "--strict makes capwrap's status 125"
		}
		r.d.Warnf("capture %s is %s; the command ran to the end and %s", r.lazy.id(), o.ownFailureText(), kept)
	}
	if !o.Kept && c != nil {
		var err error
		if herr := r.guard.Do("removing the capture", func() { err = c.Discard() }, nil); herr != nil {
			err = herr
		}
		if err != nil {
			r.d.Warnf("cannot remove capture %s: %v", c.Path(), err)
		}
	}
	// A job handed back leaves --receipt-file to the caller's later
	// commands (its launcher wrote the running receipt there).
	if f := r.cfg.ReceiptFile; f != "" && (r.job == nil || r.job.attached) {
		if err := WriteReceiptFile(f, o.Receipt(), r.guard.Stall()); err != nil {
			r.d.Warnf("cannot write --receipt-file %s: %v", f, err)
			o.OwnFailures = append(o.OwnFailures, err)
		}
	}
	if r.job != nil && o.Kept {
		var err error
		if herr := r.guard.Do("writing the preview", func() { err = c.WritePreview(r.job.text.text) }, nil); herr != nil {
			err = herr
		}
		if err != nil {
			r.d.Warnf("cannot write the preview of %s: %v", c.ID(), err)
		}
	}
	if o.Kept {
		rc := o.Receipt()
		var err error
		if herr := r.guard.Do("publishing the receipt", func() { err = c.Publish(rc) }, nil); herr != nil {
			err = herr
		}
		if err != nil {
			r.d.Warnf("cannot publish %s/receipt.json: %v", c.Path(), err)
			o.OwnFailures = append(o.OwnFailures, err)
		}
	}
	if r.events != nil {
		r.events.Finish(r.finals(o, c), o.Receipt())
	}
	if err := r.present.present(o); err != nil {
		if errors.Is(err, errPreview) {
			r.d.Warnf("%v", err)
		}
		o.OwnFailures = append(o.OwnFailures, err)
	}
	if r.job != nil {
		r.cfg.Hooks.Ended(o.ExitStatus(), o.Reraise())
	}
}

// finals are how the streams' live views end (SPEC §12: folded, the
// updates give the final preview): the sections of the preview printed,
// or, in modes that print none, of the preview rendered for them.
func (r *run) finals(o *Outcome, c *store.Capture) [2]events.Final {
	fp, _ := r.present.(*footerPresenter)
	if r.job != nil {
		fp, _ = r.job.inner.(*footerPresenter)
		if fp == nil || !fp.preview || !r.job.attached {
			fp = r.job.text
		}
	}
	if fp == nil || !fp.preview {
		tmp := *o
		fp = &footerPresenter{preview: true, cfg: r.cfg}
		fp.render(&tmp, c, r.keepers)
	}
	return fp.finals()
}

// capture is the run's capture, or nil if none was made.
func (r *run) capture() *store.Capture {
	c, _ := r.lazy.made()
	return c
}

// placeOf names capture c for the receipt.
func placeOf(c *store.Capture) *Place {
	return &Place{ID: c.ID(), Dir: c.Path(), AbsDir: c.AbsPath()}
}

// displayCommand is a process's command line as a terminal may show it
// (preview.Sanitize: escape sequences removed, other control bytes shown
// escaped) on one line (runs of white space, newlines and tabs included,
// made one space): a descendant's name is the process's own choice, and
// may hold ESC or BEL that would retitle or clear the reader's terminal.
func displayCommand(s string) string {
	return strings.Join(strings.Fields(string(preview.Sanitize([]byte(s)))), " ")
}

// sanitize masks s with policy, or returns it as is with redaction off.
func sanitize(policy *redact.Policy, s string) string {
	if policy == nil {
		return s
	}
	return policy.String(s)
}

// choosePTY decides --pty (SPEC §2): auto gives a stream a pty in tee mode
// only, and only when capwrap's own corresponding stream is a terminal
// (terminal: stdout's, stderr's), so that a stream going to a pipe or a
// file is a pipe, as it would be without capwrap: `capwrap X | Y` gives Y
// the bytes `X | Y` would, and --tee in CI never starts a pager. always
// gives both streams a pty. auto falls back to pipes with a warning where
// ptys cannot be had; always fails there.
func choosePTY(flag When, mode Mode, terminal [2]bool, d Diag) (wrap.PTYMode, error) {
	want := wrap.PTYNone
	switch {
	case flag == Always:
		want = wrap.PTYBoth
	case flag == Auto && mode == ModeTee:
		if terminal[0] {
			want |= wrap.PTYStdout
		}
		if terminal[1] {
			want |= wrap.PTYStderr
		}
	}
	if want == wrap.PTYNone {
		return want, nil
	}
	if err := wrap.PTYAvailable(); err != nil {
		if flag == Always {
			return wrap.PTYNone, fmt.Errorf("--pty always: cannot allocate a pseudo-terminal: %v", err)
		}
		d.Warnf("cannot allocate a pseudo-terminal (%v); using pipes", err)
		return wrap.PTYNone, nil
	}
	return want, nil
}

// startErrorText says why the command did not start, in the words of a
// shell (127 not found, 126 not executable); the name is written as a
// shell word, so that an empty one shows as two single quotes.
func startErrorText(name string, res wrap.Result) string {
	switch {
	case errors.Is(res.StartErr, wrap.ErrNotFound):
		return fmt.Sprintf("command not found: %s", text.ShellQuote(name))
	case errors.Is(res.StartErr, wrap.ErrNotExecutable):
		return fmt.Sprintf("cannot execute %s: %v", name, store.UnwrapPath(res.StartErr))
	}
	return fmt.Sprintf("cannot start %s: %v", name, res.StartErr)
}

// WriteReceiptFile writes the receipt, pretty JSON, to --receipt-file
// (store.WriteReceiptFile), waiting at most stall for it: the file may be
// on a file system that hangs too (a harness's conversation folder), and
// the receipt on stdout must still come. Its own guard, since a hang there
// says nothing of the tool-outputs directory.
func WriteReceiptFile(path string, rc *receipt.Receipt, stall time.Duration) error {
	var err error
	if herr := guard.New(stall).Do("writing --receipt-file", func() { err = store.WriteReceiptFile(path, rc) }, nil); herr != nil {
		return herr
	}
	return err
}
