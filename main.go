//go:build unix

// Command capwrap runs a command, keeps a sanitized copy of everything it
// writes in private files under a tool-outputs directory, and prints a
// bounded preview and a one-line receipt (or, on a terminal, behaves like
// tee). The contract is SPEC.md. This package holds CLI policy only: it
// parses the command line and hands a run over to internal/runner, or a
// verb to its cmd_*.go file (reading captures back, background jobs); it
// re-raises a child's signal
// after the run has returned.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/internal/job"
	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/internal/sigcatch"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/wrap"
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = ""

// verbs are the words that, first on the command line and before any "--",
// select a secondary verb instead of starting a command (SPEC §1).
var verbs = []string{"list", "show", "read", "prune", "wait", "stop", "help"}

// commands are the verbs but help, each with its flags (SPEC §8, §10).
var commands = map[string]func() command{
	"list": newListCommand, "show": newShowCommand, "read": newReadCommand,
	"prune": newPruneCommand, "wait": newWaitCommand, "stop": newStopCommand,
}

// command is a verb with its options bound (as restic's newXCommand): a
// new one for each run, addFlags declares its flags on a verb's flag set
// and, once they are parsed, run runs it with its arguments.
type command struct {
	// nargs is the number of arguments it takes: exactly nargs, or at
	// least -nargs when negative.
	nargs    int
	usage    string
	addFlags func(fs *pflag.FlagSet)
	run      func(e *env, args []string) error
}

// runVerb runs the secondary verb name with the arguments after it (SPEC
// §8, §10): with -h or --help it prints the verb's help instead.
func runVerb(e *env, name string, args []string) error {
	if name == "help" {
		return runHelp(e, args)
	}
	newCommand, ok := commands[name]
	if !ok {
		return usageError{msg: "unknown verb " + name}
	}
	c := newCommand()
	fs := verbFlags(name)
	c.addFlags(fs)
	help, err := parseVerb(c, fs, args, e.global)
	switch {
	case err != nil:
		return err
	case help:
		printHelp(e.stdout, name)
		return nil
	}
	return c.run(e, fs.Args())
}

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
		return exitRefused, 0
	}
	fromEnv, err := applyEnv(fs, os.Getenv)
	if err != nil {
		d.Errorf("%v", err)
		return exitRefused, 0
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
		e := &env{stdout: stdout, stderr: stderr, getenv: os.Getenv, d: d, global: &o}
		return exitStatus(runVerb(e, rest[0], rest[1:]), d)
	}
	if len(rest) == 0 {
		d.Errorf("no command given")
		d.Hintf("usage: capwrap [flags] -- COMMAND [ARG...]")
		return exitRefused, 0
	}
	cfg, err := o.config(rest)
	if err != nil {
		d.Errorf("%v", err)
		return exitRefused, 0
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
