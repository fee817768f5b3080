//go:build unix

// Command capwrap runs a command, keeps a sanitized copy of everything it
// writes in private files under a tool-outputs directory, and prints a
// bounded preview and a one-line receipt (or, on a terminal, behaves like
// tee). The contract is SPEC.md. This package holds CLI policy only: it
// parses the command line and hands a run over to internal/runner, or a
// verb to verbs.go (reading captures back); it re-raises a child's signal
// after the run has returned.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/capwrap/capwrap/internal/job"
	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/internal/sigcatch"
	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/wrap"
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = ""

// verbs are the words that, first on the command line and before any "--",
// select a secondary verb instead of starting a command (SPEC §1).
var verbs = []string{"list", "show", "read", "prune", "wait", "stop", "help"}

// exitUsage is capwrap's status when it could not start: bad flags, an
// unusable tool-outputs directory (SPEC §3).
const exitUsage = 125

func main() {
	// Signals to forward are caught from process start (package sigcatch's
	// init); a test binary that released them to run a helper catches
	// them again here.
	sigcatch.Catch()
	os.Exit(exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)))
}

// exit re-raises sig on capwrap, when it is not 0, so that whoever waits
// for capwrap sees the child's own death (SPEC §3); if that does not end
// capwrap, it returns status (128+sig) for os.Exit.
func exit(status int, sig syscall.Signal) int {
	if sig != 0 {
		wrap.Reraise(sig)
	}
	return status
}

// options are capwrap's flags for a capture, after the CAPWRAP_* variables
// have filled in what the command line left unset.
type options struct {
	dir          string
	keep         string
	timeout      time.Duration
	killAfter    time.Duration
	drainTimeout time.Duration
	stallTimeout time.Duration
	tee, preview bool
	quiet        bool
	// shell is -c STRING: a command line for the shell.
	shell      string
	background bool
	// backgroundAfter is --background-after (0: never).
	backgroundAfter time.Duration
	receiptFile     string
	stdoutChars     int
	stderrChars     int
	previewBytes    size
	maxCapture      size
	dirQuota        size
	queueBytes      size
	strict          bool
	noRedact        bool
	redactEnv       []string
	redactAllowEnv  []string
	redactFile      []string
	redactPat       []string
	noLabel         bool
	pty             string
	color           string
	help            bool
	version         bool

	// fromEnv names the flags whose value came from a CAPWRAP_* variable,
	// so that errors name what the user actually set.
	fromEnv map[string]bool
	// flags is the flag set that filled o: a verb takes some of them
	// after its name too (verbGlobals).
	flags *pflag.FlagSet
}

// source names where a flag's value came from: "--keep" or "CAPWRAP_KEEP".
func (o *options) source(flag string) string {
	if o.fromEnv[flag] {
		return envName(flag)
	}
	return "--" + flag
}

// newFlagSet declares capwrap's global flags. Every flag but --help and
// --version has a CAPWRAP_* variable of the same name (SPEC §4 Limits).
func newFlagSet(o *options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("capwrap", pflag.ContinueOnError)
	fs.SetInterspersed(false) // capwrap make -j4 passes -j4 to make (SPEC §1)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false

	fs.StringVar(&o.dir, "dir", "", "tool-outputs directory (default ./tool-outputs)")
	fs.StringVar(&o.keep, "keep", "auto", "keep the capture: auto|always|never")
	fs.BoolVar(&o.tee, "tee", false, "stream the output live, then a summary on stderr")
	fs.BoolVar(&o.preview, "preview", false, "print a bounded preview and the receipt after the command ends")
	fs.BoolVar(&o.quiet, "quiet", false, "print only the receipt line")
	fs.StringVar(&o.receiptFile, "receipt-file", "", "also write the receipt as JSON to this path")
	fs.BoolVar(&o.background, "background", false, "run the command as a background job: print its launch receipt and exit 0")
	fs.Var(durationVar(&o.backgroundAfter, 0), "background-after", "hand the command back as a background job (exit 75) if it still runs after this long")
	fs.Var(durationVar(&o.timeout, 0), "timeout", "send SIGTERM to the command's process group after this long (0: never)")
	fs.Var(durationVar(&o.killAfter, 5*time.Second), "kill-after", "then SIGKILL after this long")
	fs.Var(durationVar(&o.drainTimeout, time.Second), "drain-timeout", "wait this long for end of output after the command exits")
	fs.IntVar(&o.stdoutChars, "stdout-chars", 8000, "preview budget for stdout, in characters, at most 1000000")
	fs.IntVar(&o.stderrChars, "stderr-chars", 2000, "preview budget for stderr, in characters, at most 1000000")
	o.previewBytes = 16 << 10
	fs.Var(&o.previewBytes, "preview-bytes", "ceiling on the whole preview, in bytes, at most 16M")
	o.maxCapture = 32 << 20
	fs.Var(&o.maxCapture, "max-capture-bytes", "bytes kept per capture, both streams together (0: no limit)")
	o.dirQuota = 128 << 20
	fs.Var(&o.dirQuota, "dir-quota", "bytes kept by all captures in the tool-outputs directory (0: no limit)")
	o.queueBytes = 8 << 20
	fs.Var(&o.queueBytes, "queue-bytes", "write queue between the pipe reader and the file writer, 1 byte to 1G")
	fs.Var(durationVar(&o.stallTimeout, 10*time.Second), "stall-timeout", "stop persisting when the file writer makes no progress this long")
	fs.BoolVar(&o.strict, "strict", false, "exit 125 when capwrap itself failed (e.g. disk full)")
	fs.BoolVar(&o.noRedact, "no-redact", false, "write output unsanitized (no credential masking)")
	fs.StringArrayVar(&o.redactEnv, "redact-env", nil, "also mask the value of this environment variable (repeatable)")
	fs.StringArrayVar(&o.redactAllowEnv, "redact-allow-env", nil, "do not mask this variable, whose name looks secret but whose value is not (repeatable)")
	fs.StringArrayVar(&o.redactFile, "redact-file", nil, "also mask the values in this file, one per line (repeatable; 16K in all)")
	fs.StringArrayVar(&o.redactPat, "redact-pattern", nil, "also mask matches of this regular expression (repeatable)")
	fs.BoolVar(&o.noLabel, "no-label", false, "leave the command out of the receipt")
	fs.StringVar(&o.pty, "pty", "auto", "give the command terminals for stdout and stderr: auto|always|never")
	fs.StringVar(&o.color, "color", "auto", "colour the summary: auto|always|never")
	fs.StringVarP(&o.shell, "command", "c", "", "run this string with a POSIX shell ($SHELL if sh, bash, zsh, dash or ksh, else /bin/sh)")
	fs.BoolVarP(&o.help, "help", "h", false, "show help")
	fs.BoolVar(&o.version, "version", false, "print the version")
	return fs
}

// noVariable names the flags without a CAPWRAP_* variable: --help,
// --version, and -c (a command line taken from the environment would run
// in every capwrap that inherits it).
func noVariable(flag string) bool {
	return flag == "help" || flag == "version" || flag == "command"
}

// envName is the CAPWRAP_* variable of a flag: --dir-quota is
// CAPWRAP_DIR_QUOTA (SPEC §4).
func envName(flag string) string {
	return "CAPWRAP_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyEnv sets every flag the command line left unset from its CAPWRAP_*
// variable, when that is set and not empty; a flag beats its variable. A
// boolean variable also takes yes/no and on/off. It returns the names of
// the flags it set.
func applyEnv(fs *pflag.FlagSet, getenv func(string) string) (map[string]bool, error) {
	var err error
	set := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || noVariable(f.Name) {
			return
		}
		v := getenv(envName(f.Name))
		if v == "" {
			return
		}
		if f.Value.Type() == "bool" {
			switch strings.ToLower(v) {
			case "yes", "on":
				v = "true"
			case "no", "off":
				v = "false"
			}
		}
		if serr := fs.Set(f.Name, v); serr != nil {
			var bad *pflag.InvalidValueError
			if errors.As(serr, &bad) {
				serr = errors.Unwrap(bad) // the variable's name, not the flag's
			}
			if f.Value.Type() == "bool" {
				serr = errors.New("want true or false (or yes/no, on/off, 1/0)")
			}
			err = fmt.Errorf("invalid %s %q: %v", envName(f.Name), v, serr)
			return
		}
		set[f.Name] = true
	})
	return set, err
}

// run is capwrap without os.Exit: it returns the exit status and the
// signal to re-raise (0 for none), so that every deferred flush and publish
// has run by the time the process ends.
func run(args []string, stdin, stdout, stderr *os.File) (int, syscall.Signal) {
	if len(args) > 0 && args[0] == wrap.WatchdogArg {
		return wrap.WatchdogMain(stdin, args[1:]), 0
	}
	var sup *job.Supervisor
	if len(args) > 1 && args[0] == job.SuperviseArg {
		// A background job's supervisor (SPEC §10): the launcher's own
		// arguments follow, the link is descriptor 3.
		unix.CloseOnExec(3) // the link is the supervisor's alone, not its command's
		sup = job.NewSupervisor(os.NewFile(3, "link"), args[1] == "detach", diag{stderr})
		args = args[2:]
	}
	d := diag{stderr}
	var o options
	fs := newFlagSet(&o)
	if err := fs.Parse(args); err != nil {
		d.Errorf("%s", flagError(err))
		d.Hintf("capwrap --help lists the flags; put -- before the command")
		return exitUsage, 0
	}
	fromEnv, err := applyEnv(fs, os.Getenv)
	if err != nil {
		d.Errorf("%v", err)
		return exitUsage, 0
	}
	o.fromEnv, o.flags = fromEnv, fs
	rest := fs.Args()
	switch {
	case o.help:
		printHelp(stdout, "")
		return 0, 0
	case o.version:
		fmt.Fprintf(stdout, "capwrap %s\n", versionString())
		return 0, 0
	}
	if o.shell != "" { // -c STRING: the shell runs it; what follows is its $0, $1...
		rest = append(shellArgv(o.shell, os.Getenv), rest...)
	} else if len(rest) > 0 && fs.ArgsLenAtDash() != 0 && isVerb(rest[0]) {
		// A verb forwards nothing: Ctrl-C ends it (read --follow, wait)
		// as it ends any program.
		sigcatch.Release()
		if rest[0] == "wait" { // exits as the job's command did, its signal re-raised
			return verbWait(rest[1:], &o, stdout, d)
		}
		return runVerb(rest[0], rest[1:], &o, stdout, stderr), 0
	}
	if len(rest) == 0 {
		d.Errorf("no command given")
		d.Hintf("usage: capwrap [flags] -- COMMAND [ARG...]")
		return exitUsage, 0
	}
	cfg, err := o.config(rest)
	if err != nil {
		d.Errorf("%v", err)
		return exitUsage, 0
	}
	cfg.Stdin, cfg.Stdout, cfg.Stderr, cfg.Diag = stdin, stdout, stderr, d
	switch {
	case sup != nil:
		cfg.Hooks = sup
	case o.background || o.backgroundAfter > 0:
		return job.Launch(cfg, args, o.background, o.backgroundAfter)
	case runner.UnderCapwrap(os.Getenv, stdout) && !(o.preview && !o.fromEnv["preview"]):
		// Under a capwrap already, on the output it captures (a script or
		// shell it runs): that one captures; this one passes its command
		// through, under its own --timeout, signals and watchdog (SPEC §1:
		// not captured twice). --preview given here still asks for a
		// capture of its own.
		cfg.PassThrough = true
	case isCapwrap(rest[0]):
		// A capwrap asked to run capwrap (SPEC §1): the inner one captures
		// or runs its verb, with this one's flags (nested).
		o.nested(&cfg)
	}
	out := runner.Run(cfg)
	if errors.Is(out.Process.StartErr, wrap.ErrNotFound) && o.shell == "" {
		if h := shellSyntaxHint(rest, os.Getenv); h != "" {
			d.Hintf("%s", h)
		} else if v, ok := verbNearMiss(cfg.Argv[0]); ok && fs.ArgsLenAtDash() != 0 {
			// Not found, and not written after "--": perhaps a verb
			// mistyped (capwrap lst). After the run's own error and output.
			d.Hintf("did you mean capwrap %s?", v)
		}
	}
	return out.ExitStatus(), out.Reraise()
}

// flagError turns pflag's messages into capwrap's one-line form; a bad
// value reads as its variable's error does (applyEnv): invalid --timeout
// "soon": not a duration...
func flagError(err error) string {
	msg := err.Error()
	var bad *pflag.InvalidValueError
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return "unknown flag: -h"
	case errors.As(err, &bad) && bad.GetFlag() != nil:
		msg = fmt.Sprintf("invalid --%s %q: %v", bad.GetFlag().Name, bad.GetValue(), errors.Unwrap(bad))
	}
	return strings.TrimSpace(strings.SplitN(msg, "\n", 2)[0])
}

// config validates the values that pflag cannot and returns the run of
// argv they describe (standard streams and diagnostics left to the caller).
func (o *options) config(argv []string) (runner.Config, error) {
	cfg := runner.Config{
		Argv: argv, Dir: o.dir, DirFromFlag: o.dir != "" && !o.fromEnv["dir"],
		Timeout: o.timeout, KillAfter: o.killAfter, DrainTimeout: o.drainTimeout,
		StdoutChars: o.stdoutChars, StderrChars: o.stderrChars, PreviewBytes: int(o.previewBytes),
		Redaction: runner.Redaction{Off: o.noRedact, EnvNames: o.redactEnv, AllowEnv: o.redactAllowEnv, Files: o.redactFile, Patterns: o.redactPat},
		NoLabel:   o.noLabel, ReceiptFile: o.receiptFile, Strict: o.strict,
		Getenv: os.Getenv, Environ: os.Environ(),
	}
	cfg.Limits = store.DefaultLimits()
	cfg.Limits.MaxCaptureBytes = int64(o.maxCapture)
	cfg.Limits.DirQuota = int64(o.dirQuota)
	cfg.Limits.QueueBytes = int64(o.queueBytes)
	cfg.Limits.StallTimeout = o.stallTimeout
	for _, w := range []struct {
		flag, v string
		dst     *runner.When
	}{{"keep", o.keep, &cfg.Keep}, {"pty", o.pty, &cfg.PTY}, {"color", o.color, &cfg.Color}} {
		var err error
		if *w.dst, err = runner.ParseWhen(w.v); err != nil {
			return cfg, fmt.Errorf("invalid %s %q: %v", o.source(w.flag), w.v, err)
		}
	}
	// One mode: a flag beats the other modes' variables (CAPWRAP_QUIET=1
	// capwrap --tee is --tee); two flags, or two variables, contradict.
	modes := []struct {
		flag string
		on   bool
		mode runner.Mode
	}{{"tee", o.tee, runner.ModeTee}, {"preview", o.preview, runner.ModePreview}, {"quiet", o.quiet, runner.ModeQuiet}}
	for _, fromEnv := range []bool{false, true} {
		n := 0
		for _, m := range modes {
			if m.on && o.fromEnv[m.flag] == fromEnv {
				n++
				cfg.Mode = m.mode
			}
		}
		if n > 1 {
			return cfg, errors.New("--tee, --preview and --quiet exclude each other")
		}
		if n == 1 {
			break
		}
	}
	if o.background && o.backgroundAfter > 0 {
		// A flag beats the other flag's variable (a shell with
		// CAPWRAP_BACKGROUND_AFTER set may still start a job with
		// --background); two flags, or two variables, contradict.
		switch bgEnv, afterEnv := o.fromEnv["background"], o.fromEnv["background-after"]; {
		case afterEnv && !bgEnv:
			o.backgroundAfter = 0
		case bgEnv && !afterEnv:
			o.background = false
		default:
			return cfg, fmt.Errorf("%s and %s exclude each other", o.source("background"), o.source("background-after"))
		}
	}
	switch {
	case o.backgroundAfter < 0:
		return cfg, fmt.Errorf("invalid %s %v: must not be negative", o.source("background-after"), o.backgroundAfter)
	case o.stallTimeout == 0:
		return cfg, fmt.Errorf("invalid %s 0s: must be positive (the default is 10s)", o.source("stall-timeout"))
	}
	for _, v := range []struct {
		name string
		d    time.Duration
	}{{"timeout", o.timeout}, {"kill-after", o.killAfter}, {"drain-timeout", o.drainTimeout}, {"stall-timeout", o.stallTimeout}} {
		if v.d < 0 {
			return cfg, fmt.Errorf("invalid %s %v: must not be negative", o.source(v.name), v.d)
		}
	}
	return cfg, o.checkBounds(append(previewBounds, "queue-bytes")...)
}

// previewBounds are the bounded flags of a preview, which the job verbs
// print too.
var previewBounds = []string{"stdout-chars", "stderr-chars", "preview-bytes"}

// checkBounds checks the named size and count flags that cost memory
// against their bounds.
func (o *options) checkBounds(names ...string) error {
	for _, v := range []struct {
		name     string
		n        int64
		min, max int64
		chars    bool // a count of characters, else a size in bytes
	}{
		{"stdout-chars", int64(o.stdoutChars), 0, maxPreviewChars, true},
		{"stderr-chars", int64(o.stderrChars), 0, maxPreviewChars, true},
		{"preview-bytes", int64(o.previewBytes), 0, maxPreviewBytes, false},
		{"queue-bytes", int64(o.queueBytes), 1, maxQueueBytes, false},
	} {
		if !slices.Contains(names, v.name) || v.n >= v.min && v.n <= v.max {
			continue
		}
		if v.chars {
			return fmt.Errorf("invalid %s %d: want %d to %s characters", o.source(v.name), v.n, v.min, text.Commas(v.max))
		}
		return fmt.Errorf("invalid %s %s: want %s to %s bytes", o.source(v.name), humanSize(v.n), humanSize(v.min), humanSize(v.max))
	}
	return nil
}

// Bounds of the size and count flags that cost memory (issue 13). The
// other sizes (--max-capture-bytes, --dir-quota) are bounded by what a
// size can say, 4096T (size.go).
const (
	// maxPreviewChars bounds --stdout-chars and --stderr-chars: a preview
	// keeper holds about 5 bytes per character of budget, and stderr's
	// keeper both budgets (SPEC §5), so at most about 10 MB.
	maxPreviewChars = 1_000_000
	// maxPreviewBytes bounds --preview-bytes: two full budgets of 4-byte
	// characters, with room for markers, fit in it.
	maxPreviewBytes = 16 << 20
	// maxQueueBytes bounds --queue-bytes, memory that a slow disk fills.
	maxQueueBytes = 1 << 30
)

func isVerb(w string) bool {
	for _, v := range verbs {
		if w == v {
			return true
		}
	}
	return false
}

// versionString is the stamped version (make build), else the module version
// that go install recorded, else "dev+REVISION" from the VCS stamp of a
// build in a checkout, else "dev".
func versionString() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	// go build or go install in a checkout: name the commit it was built from.
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	switch {
	case rev == "":
		return "dev"
	case dirty:
		return "dev+" + rev + "-dirty"
	}
	return "dev+" + rev
}
