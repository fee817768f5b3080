package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/capwrap/capwrap/preview"
	"github.com/capwrap/capwrap/redact"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/wrap"
)

// liveReceiptDelay is how long after the spawn receipt.live.json is written
// (SPEC §4 "at launch"). A command that has ended and been drained by then
// needs none: its receipt.json follows at once, or nothing is kept, and the
// fsync a live receipt costs (about 1 ms here) would double what a quick
// "capwrap -- true" adds. The capture's lock tells it is running meanwhile.
const liveReceiptDelay = 25 * time.Millisecond

// Presentation modes (SPEC §2).
const (
	modePreview = "preview"
	modeTee     = "tee"
	modeQuiet   = "quiet"
)

// capture runs one command under capwrap: SPEC §2–§7 end to end. It returns
// capwrap's exit status (SPEC §3 table); a child killed by a signal has that
// signal re-raised on capwrap before the status is returned.
func capture(o *options, argv []string, stdin, stdout, stderr *os.File) int {
	d := diag{stderr}

	// A closed stdout must give EPIPE, not kill capwrap (SPEC §2), and a
	// file-size limit must give EFBIG (SPEC §4). Catching, not ignoring,
	// keeps the child's own dispositions at their defaults.
	ignored := make(chan os.Signal, 8)
	signal.Notify(ignored, syscall.SIGPIPE, syscall.SIGXFSZ)
	defer signal.Stop(ignored)
	go func() {
		for range ignored {
		}
	}()

	mode := modePreview
	switch {
	case o.quiet:
		mode = modeQuiet
	case o.tee:
		mode = modeTee
	case o.preview:
	case isatty.IsTerminal(stdout.Fd()):
		mode = modeTee
	}
	setupColor(o.color, stderr)

	// Everything that can refuse the run is checked before the command
	// starts and before anything is created (SPEC §3: exit 125).
	policyReady, err := redactionPolicy(o)
	if err != nil {
		d.errorf("%v", err)
		return exitUsage
	}
	usePTY, stderrPipe, err := choosePTY(o.pty, mode, isatty.IsTerminal(stdin.Fd()), d)
	if err != nil {
		d.errorf("%v", err)
		return exitUsage
	}
	dirPath, chosen := store.Locate(o.dir, os.Getenv)
	dir, warnings, err := store.Open(dirPath, chosen, os.Getenv)
	if err != nil {
		d.errorf("cannot use tool-outputs directory %s: %v", dirPath, err)
		switch {
		case o.dir != "" && !o.fromEnv["dir"]:
			d.hintf("give --dir a directory you own (or a path where capwrap may create one)")
		case chosen:
			d.hintf("point CAPWRAP_DIR at a directory you own, or pass --dir")
		default:
			d.hintf("pass --dir or set CAPWRAP_DIR to a directory you own")
		}
		return exitUsage
	}
	defer dir.Close()
	for _, w := range warnings {
		d.warnf("%s", w)
	}
	limits := store.DefaultLimits()
	limits.MaxCaptureBytes = int64(o.maxCapture)
	limits.DirQuota = int64(o.dirQuota)
	limits.QueueBytes = int64(o.queueBytes)
	limits.StallTimeout = o.stallTimeout
	lc := &lazyCapture{started: time.Now(), warnf: d.warnf,
		create: func() (*store.Capture, error) { return dir.Create(time.Now(), limits) },
		onError: func(err error) {
			d.warnf("cannot create a capture in %s: %v; the command runs on without one", dir.Path(), unwrapPath(err))
		}}

	// The command label is sanitized by the redaction policy, which may
	// still be compiling: it is filled in once the policy is needed anyway.
	labelOf := func(policy *redactionConfig) []string {
		if o.noLabel {
			return nil
		}
		return policy.labelArgs(argv)
	}
	rc := newReceipt(nil, !o.noRedact, usePTY)

	// Each stream: pipe reader → redactor → {capture file, preview keeper,
	// live terminal in tee mode}. The redactor is the seam of SPEC §6: all
	// downstream stages see only sanitized bytes.
	keepers := [2]*preview.Keeper{
		preview.NewKeeper(o.stdoutChars),
		preview.NewKeeper(o.stdoutChars + o.stderrChars), // stdout's unused budget may flow here (SPEC §5)
	}
	var lives [2]*liveWriter
	var sinks [2]*sink
	for i, name := range []string{"stdout", "stderr"} {
		ws := []io.Writer{lc.stream(name), keepers[i]}
		if mode == modeTee {
			lives[i] = &liveWriter{w: []*os.File{stdout, stderr}[i]}
			ws = append(ws, lives[i])
		}
		sinks[i] = &sink{dst: io.MultiWriter(ws...), ready: policyReady}
	}

	liveWritten := make(chan struct{})
	var liveTimer *time.Timer
	res := wrap.Run(wrap.Config{
		Args:         argv,
		Stdout:       sinks[0],
		Stderr:       sinks[1],
		Timeout:      o.timeout,
		KillAfter:    o.killAfter,
		DrainTimeout: o.drainTimeout,
		Foreground:   isatty.IsTerminal(stdin.Fd()) && wrap.InForeground(int(stdin.Fd())),
		PTY:          usePTY,
		StderrPipe:   stderrPipe,
		OnStart: func(pid int) {
			// Written while the child runs, from a copy, since rc is
			// filled in further when the child ends; see liveReceiptDelay.
			live := *rc
			live.Process.PID = &pid
			liveTimer = time.AfterFunc(liveReceiptDelay, func() {
				defer close(liveWritten)
				policy, err := policyReady()
				if err != nil {
					return // reported when the command has ended
				}
				live.Command = labelOf(policy)
				c, err := lc.get()
				if err != nil {
					return // reported by lc
				}
				placeReceipt(&live, c)
				if err := c.WriteLiveReceipt(&live); err != nil {
					d.warnf("cannot write %s: %v", c.Path()+"/receipt.live.json", err)
				}
			})
		},
	})
	if liveTimer != nil && !liveTimer.Stop() {
		<-liveWritten // before the capture is finalized or discarded
	}
	var seen [][]byte
	for _, s := range sinks {
		s.Close() // end of stream: release what the redactor held back
		if s.r != nil {
			seen = append(seen, s.r.Seen()...)
		}
	}
	policy, err := policyReady()
	if err != nil { // not expected: CheckPatterns has passed; the sinks wrote nothing
		if c, _ := lc.made(); c != nil {
			c.Discard()
		}
		d.errorf("%v", err)
		return exitUsage
	}
	rc.Command = labelOf(policy)
	// Pieces of a secret the output revealed are masked in the label too
	// (a command may print a credential in parts).
	for i := range rc.Command {
		rc.Command[i] = redact.MaskSeen(rc.Command[i], seen)
	}
	if err := lc.closeArrival(); err != nil {
		d.warnf("arrival order of %s: %v", lc.id(), err)
	}
	if res.StartErr != nil {
		reportStartError(d, argv[0], res, policy.label)
		// The error names the command, which may hold a secret: the
		// receipt's process.reason is sanitized like the label.
		res.StartErr = errors.New(policy.label(res.StartErr.Error()))
	}

	// Drain first: whether the capture is kept depends on the preview, and
	// a capture about to be discarded need not be fsynced.
	// A capture not made yet saw no byte: it is complete and empty.
	fin := store.Result{State: "complete"}
	c, cerr := lc.made()
	switch {
	case c != nil:
		placeReceipt(rc, c)
		fin = c.Drain()
	case cerr != nil:
		fin = notMade(cerr)
	}
	fillReceipt(rc, res, fin, sinks, keepers)

	failed := res.State != wrap.StateExited || res.ExitCode != 0
	var text []byte
	if mode == modePreview {
		var outInfo, errInfo preview.Info
		text, outInfo, errInfo = preview.Render(
			previewStream(o, c, "stdout", keepers[0], rc.Streams.Stdout.CommittedBytes),
			previewStream(o, c, "stderr", keepers[1], rc.Streams.Stderr.CommittedBytes),
			preview.Options{StdoutChars: budget(o.stdoutChars), StderrChars: budget(o.stderrChars), MaxBytes: max(1, int(o.previewBytes)), Failed: failed})
		rc.Streams.Stdout.Preview = previewInfo(outInfo)
		rc.Streams.Stderr.Preview = previewInfo(errInfo)
	}

	keep := o.keep == "always" ||
		(o.keep == "auto" && !(res.State == wrap.StateNotStarted || compactSuccess(mode, res, rc)))
	if keep && c == nil && cerr == nil {
		// Kept though nothing was printed: made now, empty.
		if c, cerr = lc.get(); c != nil {
			placeReceipt(rc, c)
		} else {
			fin = notMade(cerr)
			fillReceipt(rc, res, fin, sinks, keepers)
		}
	}
	keep = keep && c != nil
	if keep {
		// SPEC §4 order: files flushed, fsynced, closed, renamed to .log,
		// then receipt.json published, then the preview printed.
		fin, err := c.Finalize()
		if err != nil {
			d.warnf("finalizing capture %s: %v", c.ID(), err)
		}
		fillReceipt(rc, res, fin, sinks, keepers)
	}
	status, ownFailure := exitStatus(res, rc.Capture)
	rc.ExitStatus = &status
	// --strict: a failure of capwrap's own makes its status 125, and the
	// receipts printed or published after it say so (exit_status is what
	// capwrap exits with, SPEC §7).
	strict := func() {
		if ownFailure && o.strict && status != exitUsage {
			status = exitUsage
			rc.ExitStatus = &status
		}
	}
	strict()
	if ownFailure {
		msg := rc.Capture.State
		if rc.Capture.Reason != nil {
			msg = *rc.Capture.Reason
		}
		if rc.Capture.Error != nil {
			msg += ": " + *rc.Capture.Error
		}
		kept := "its status is capwrap's"
		if o.strict {
			kept = "--strict makes capwrap's status 125"
		}
		d.warnf("capture %s is %s (%s); the command ran to the end and %s", lc.id(), rc.Capture.State, msg, kept)
	}
	if !keep {
		if c != nil {
			if err := c.Discard(); err != nil {
				d.warnf("cannot remove capture %s: %v", c.Path(), err)
			}
		}
		forget(rc)
	}
	// --receipt-file is written before receipt.json, so that a failure to
	// write it is in receipt.json's exit_status under --strict.
	if o.receiptFile != "" {
		if err := writeReceiptFile(o.receiptFile, rc); err != nil {
			d.warnf("cannot write --receipt-file %s: %v", o.receiptFile, err)
			ownFailure = true
			strict()
		}
	}
	if keep {
		if err := c.Publish(rc); err != nil {
			d.warnf("cannot publish %s/receipt.json: %v", c.Path(), err)
			ownFailure = true
			strict()
		}
	}

	// The short footer may leave out only null, empty and default values
	// (SPEC §7); redaction off, secrets replaced, or a capture that could
	// not be made (its reason and error) are neither.
	compact := !keep && status == 0 && rc.Redaction.Enabled && rc.Redaction.Replaced == 0 &&
		rc.Capture.State == "complete"
	switch mode {
	case modePreview, modeQuiet:
		footer, _ := rc.Footer(compact)
		out := bufio.NewWriterSize(stdout, 32<<10)
		out.Write(text)
		out.Write(footer)
		if err := out.Flush(); err != nil && !errors.Is(err, syscall.EPIPE) {
			d.warnf("cannot write the preview: %v", err)
			ownFailure = true
		}
	case modeTee:
		for _, l := range lives {
			if l.err != nil && !errors.Is(l.err, syscall.EPIPE) {
				d.warnf("cannot write live output: %v", l.err)
				ownFailure = true
			}
		}
		// The summary starts a line of its own: after output that did not
		// end one, and after a Ctrl-C, whose ^C the terminal echoed.
		if lives[0].midLine || lives[1].midLine || res.Signal == syscall.SIGINT {
			fmt.Fprintln(stderr)
		}
		printSummary(stderr, rc, res, keep)
	}
	strict() // a preview or live-output failure: after every receipt
	if res.State == wrap.StateSignaled && !res.TimedOut && status == 128+int(res.Signal) {
		wrap.Reraise(res.Signal)
	}
	return status
}

// notMade is the store result of a capture that could not be made: failed,
// reason write_error (SPEC §7), with the cause.
func notMade(err error) store.Result {
	return store.Result{State: "failed", Reason: ptr("write_error"), Error: ptr("cannot create the capture: " + unwrapPath(err).Error())}
}

// budget passes a preview budget to preview.Render, which reads 0 as "the
// default" and a negative value as "none": on capwrap's command line 0 means
// none (--stdout-chars 0 shows no stdout text, only the marker). For
// --preview-bytes, 0 becomes a ceiling of 1 byte: markers only.
func budget(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// sink is one stream's entry stage: the redactor, or a pass-through when
// redaction is off, in front of dst. The redaction policy may still be
// compiling when the command starts; the first Write (or Close) waits for
// it, so compiling overlaps with the spawn. Should the policy fail, the sink
// writes nothing (fail closed) and the run reports the error.
type sink struct {
	dst   io.Writer
	ready func() (*redactionConfig, error)
	once  sync.Once
	w     io.Writer      // dst, the redactor or io.Discard; set by init
	r     *redact.Writer // the redactor, nil without one
}

func (s *sink) init() {
	s.once.Do(func() {
		policy, err := s.ready()
		switch {
		case err != nil:
			s.w = io.Discard
		case policy == nil:
			s.w = s.dst
		default:
			s.r = policy.p.NewWriter(s.dst)
			s.w = s.r
		}
	})
}

// Write passes p through the redactor, once the policy is ready.
func (s *sink) Write(p []byte) (int, error) {
	s.init()
	return s.w.Write(p)
}

// Close releases what the redactor holds back.
func (s *sink) Close() error {
	s.init()
	if s.r != nil {
		return s.r.Close()
	}
	return nil
}

// replaced is the number of redactions made in this stream.
func (s *sink) replaced() int64 {
	if s.r == nil {
		return 0
	}
	return s.r.Replaced()
}

// liveWriter copies a stream to capwrap's own stdout or stderr in tee mode.
// After the first error (EPIPE: the reader went away) it stops writing there
// and reports success, so the capture goes on (SPEC §2).
type liveWriter struct {
	mu      sync.Mutex
	w       *os.File
	err     error
	midLine bool // the last byte written was not a newline
}

func (l *liveWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil && len(p) > 0 {
		_, l.err = l.w.Write(p)
		l.midLine = p[len(p)-1] != '\n'
	}
	return len(p), nil
}

// redactionConfig is the sanitizer seen from the CLI: nil when --no-redact.
type redactionConfig struct {
	p *redact.Policy
}

// redactionPolicy starts building the policy of SPEC §6 from the flags and
// returns a function that waits for it. What can refuse the run (an
// unreadable --redact-file, a bad --redact-pattern) is checked before it
// returns; compiling the catalogue (about half a millisecond) then
// overlaps with starting the command (see sink).
func redactionPolicy(o *options) (func() (*redactionConfig, error), error) {
	if o.noRedact {
		return func() (*redactionConfig, error) { return nil, nil }, nil
	}
	var values []string
	for _, f := range o.redactFile {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("cannot read --redact-file %s: %v", f, unwrapPath(err))
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v := strings.TrimRight(line, "\r"); v != "" {
				values = append(values, v)
			}
		}
	}
	if err := redact.CheckPatterns(o.redactPat); err != nil {
		return nil, err
	}
	var p *redact.Policy
	var perr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		p, perr = redact.NewPolicy(redact.Options{
			Environ:  os.Environ(),
			EnvNames: o.redactEnv,
			Values:   values,
			Patterns: o.redactPat,
		})
	}()
	return func() (*redactionConfig, error) {
		<-done
		if perr != nil {
			return nil, perr
		}
		return &redactionConfig{p}, nil
	}, nil
}

func (r *redactionConfig) label(s string) string {
	if r == nil {
		return s
	}
	return r.p.String(s)
}

// labelArgs sanitizes argv for the receipt's command label (SPEC §7). Each
// argument is sanitized alone, and also as the value of the one before it,
// joined by "=" and by a space, so that "--password hunter22" is masked like
// "--password=hunter22" and "Bearer TOKEN" in two arguments like one.
func (r *redactionConfig) labelArgs(argv []string) []string {
	label := make([]string, len(argv))
	for i, a := range argv {
		label[i] = r.label(a)
		if i == 0 || r == nil {
			continue
		}
		for _, sep := range []string{"=", " "} {
			prefix := argv[i-1] + sep
			if s := r.label(prefix + a); strings.HasPrefix(s, prefix) && s[len(prefix):] != a {
				label[i] = s[len(prefix):]
				break
			}
		}
	}
	return label
}

// unwrapPath drops the path from an *os.PathError, which the message names
// already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// choosePTY decides --pty (SPEC §2): auto means on in tee mode only, and
// falls back to pipes with a warning where ptys cannot be had; always fails
// there. It also says whether stderr stays a pipe: with auto, when stdin is
// a terminal a person may type at, only stdout gets a pty. Pagers (less,
// more, and git log, man... which start one) read their keys from the
// terminal named by stderr; a pty there would never receive a key and the
// pager could not be quit. --pty always gives stderr its pty regardless.
func choosePTY(flag, mode string, interactive bool, d diag) (use, stderrPipe bool, err error) {
	want := flag == "always" || (flag == "auto" && mode == modeTee)
	if !want {
		return false, false, nil
	}
	if err := wrap.PTYAvailable(); err != nil {
		if flag == "always" {
			return false, false, fmt.Errorf("--pty always: cannot allocate a pseudo-terminal: %v", err)
		}
		d.warnf("cannot allocate a pseudo-terminal (%v); using pipes", err)
		return false, false, nil
	}
	return true, flag == "auto" && interactive, nil
}

// reportStartError says why the command did not start, in the words of a
// shell (127 not found, 126 not executable); the message goes through
// sanitize, since the command name may itself be a secret.
func reportStartError(d diag, name string, res wrap.Result, sanitize func(string) string) {
	var msg string
	switch {
	case res.NotFound:
		msg = fmt.Sprintf("command not found: %s", name)
	case res.NotExecutable:
		msg = fmt.Sprintf("cannot execute %s: %v", name, unwrapPath(res.StartErr))
	default:
		msg = fmt.Sprintf("cannot start %s: %v", name, res.StartErr)
	}
	d.errorf("%s", sanitize(msg))
}

// compactSuccess is the --keep auto rule of SPEC §4: the child exited 0,
// the capture is complete and the preview showed every byte, so keeping
// the files would add nothing. Only preview mode shows a preview.
func compactSuccess(mode string, res wrap.Result, rc *store.Receipt) bool {
	if mode != modePreview || res.State != wrap.StateExited || res.ExitCode != 0 || rc.Capture.State != "complete" {
		return false
	}
	for _, p := range []*store.Preview{rc.Streams.Stdout.Preview, rc.Streams.Stderr.Preview} {
		if p == nil || p.State != "complete" {
			return false
		}
	}
	return true
}

// exitStatus maps the outcome to capwrap's exit status, in one place (SPEC §3
// table). ownFailure reports a failure of capwrap's own after the child
// started, which only --strict turns into 125.
func exitStatus(res wrap.Result, capState store.CaptureState) (status int, ownFailure bool) {
	ownFailure = capState.State == "failed" ||
		(capState.Reason != nil && (*capState.Reason == "write_error" || *capState.Reason == "writer_stalled"))
	switch {
	case res.State == wrap.StateNotStarted && res.NotFound:
		return 127, ownFailure
	case res.State == wrap.StateNotStarted && res.NotExecutable:
		return 126, ownFailure
	case res.State == wrap.StateNotStarted:
		return exitUsage, ownFailure
	case res.TimedOut:
		return 124, ownFailure
	case res.State == wrap.StateSignaled:
		return 128 + int(res.Signal), ownFailure
	}
	return res.ExitCode, ownFailure
}
