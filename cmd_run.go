//go:build unix

package main

// The run of a command (SPEC §1–§7, §10): the global flags made into a
// runner.Config, -c STRING, a nested capwrap, and the hints for a command
// name that only a shell knows or that is a verb mistyped.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/internal/events"
	"github.com/capwrap/capwrap/internal/job"
	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/wrap"
)

// runCommand runs the command that the global flags o and their arguments
// describe: in the foreground, as a background job's launch or, with sup,
// under its supervisor (SPEC §10), or passed through to the capwrap that
// captures already (SPEC §1). args are capwrap's own arguments, which a
// launch hands to the job's supervisor. It returns the command's status
// as an outcome, or a refusal: then the command is not run.
func runCommand(o *options, args []string, std stdio, sup *job.Supervisor) error {
	argv := o.flags.Args()
	if o.shell != "" { // -c STRING: the shell runs it; what follows is its $0, $1...
		argv = append(shellArgv(o.shell, os.Getenv), argv...)
	}
	if len(argv) == 0 {
		return refusal{"no command given", "usage: " + runUsage}
	}
	cfg, err := o.config(argv)
	if err != nil {
		var r refusal
		if errors.As(err, &r) {
			return r
		}
		return refusal{msg: err.Error()}
	}
	if err := checkFDs(); err != nil {
		return err
	}
	d := diag{std.err}
	cfg.Stdin, cfg.Stdout, cfg.Stderr, cfg.Diag = std.in, std.out, std.err, d
	switch {
	case sup != nil:
		cfg.Hooks, cfg.NoticeAfter = sup, o.jobNoticeAfter()
		sup.KillAfter = cfg.KillAfter // a stop without --kill-after escalates after it
	case o.background || o.backgroundAfter > 0:
		cfg.NoticeAfter = o.jobNoticeAfter() // the launcher's, to measure the hand-back
		return exitWith(job.Launch(cfg, args, o.background, o.backgroundAfter))
	case runner.UnderCapwrap(os.Getenv, std.out) && !(o.preview && !o.fromEnv["preview"]) && !(o.events != "" && !o.fromEnv["events"]):
		// Under a capwrap already, on the output it captures (a script or
		// shell it runs): that one captures; this one passes its command
		// through, under its own --timeout, signals and watchdog (SPEC §1:
		// not captured twice). --preview or --events given here still
		// asks for a capture of its own (a harness waiting for the
		// events' final line must get one).
		cfg.PassThrough = true
	case isCapwrap(argv[0]):
		// A capwrap asked to run capwrap (SPEC §1): the inner one captures
		// or runs its verb, with this one's flags (nested).
		o.nested(&cfg)
	}
	out := runner.Run(cfg)
	if errors.Is(out.Process.StartErr, wrap.ErrNotFound) && o.shell == "" {
		o.notFoundHint(argv, d)
	}
	return exitWith(out.ExitStatus(), out.Reraise())
}

// jobNoticeAfter is --notice-after for a job's run (issue 24), in its
// supervisor and its launcher alike: the running notice is for a caller
// waiting on the run, so none for --background, which returns at once
// with the ID, nor when --background-after is no longer than
// --notice-after: its hand-back, whose line names the job, comes no later
// than the notice would (both count from about the start), and a notice
// just before it would only repeat the ID. 0: none.
func (o *options) jobNoticeAfter() time.Duration {
	if o.background || o.noticeAfter >= o.backgroundAfter {
		return 0
	}
	return o.noticeAfter
}

// notFoundHint says, after the run's own error and output, what a command
// argv that was not found may have meant: shell syntax, or a verb
// mistyped (capwrap lst) when it was not written after "--".
func (o *options) notFoundHint(argv []string, d diag) {
	if h := shellSyntaxHint(argv, os.Getenv); h != "" {
		d.Hintf("%s", h)
	} else if v, ok := verbNearMiss(argv[0]); ok && o.flags.ArgsLenAtDash() != 0 {
		d.Hintf("did you mean capwrap %s?", v)
	}
}

// config validates the values that pflag cannot and returns the run of
// argv they describe (standard streams and diagnostics left to the caller).
func (o *options) config(argv []string) (runner.Config, error) {
	cfg := runner.Config{
		Argv: argv, Dir: o.dir, DirFromFlag: o.dir != "" && !o.fromEnv["dir"],
		Timeout: o.timeout, KillAfter: o.killAfter, DrainTimeout: o.drainTimeout, NoticeAfter: o.noticeAfter,
		StdoutChars: o.stdoutChars, StderrChars: o.stderrChars, PreviewBytes: int(o.previewBytes),
		Redaction: runner.Redaction{Off: o.noRedact, EnvNames: o.redactEnv, AllowEnv: o.redactAllowEnv, Files: o.redactFile, Patterns: o.redactPat},
		NoLabel:   o.noLabel, ReceiptFile: o.receiptFile, Strict: o.strict,
		Getenv: os.Getenv, Environ: os.Environ(),
	}
	cfg.LeaveDescendants = o.leaveDesc
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
	var err error
	if cfg.Mode, err = o.mode(); err != nil {
		return cfg, err
	}
	if err := o.oneBackground(); err != nil {
		return cfg, err
	}
	if err := o.checkDurations(); err != nil {
		return cfg, err
	}
	if err := o.checkRedaction(); err != nil {
		return cfg, err
	}
	if o.events != "" {
		if strings.HasPrefix(o.events, "fd:") && (o.background || o.backgroundAfter > 0) {
			return cfg, fmt.Errorf("invalid %s %q: a background job's supervisor holds none of the caller's descriptors (SPEC §10); give a file or FIFO path", o.source("events"), o.events)
		}
		if cfg.Events, err = events.Opener(o.events); err != nil {
			return cfg, fmt.Errorf("invalid %s: %v", o.source("events"), err)
		}
	}
	return cfg, o.checkBounds(append(previewBounds, "queue-bytes")...)
}

// mode is the one mode of --tee, --preview and --quiet (0: none given): a
// flag beats the other modes' variables (CAPWRAP_QUIET=1 capwrap --tee is
// --tee); two flags, or two variables, contradict.
func (o *options) mode() (runner.Mode, error) {
	modes := []struct {
		flag string
		on   bool
		mode runner.Mode
	}{{"tee", o.tee, runner.ModeTee}, {"preview", o.preview, runner.ModePreview}, {"quiet", o.quiet, runner.ModeQuiet}}
	var mode runner.Mode
	for _, fromEnv := range []bool{false, true} {
		n := 0
		for _, m := range modes {
			if m.on && o.fromEnv[m.flag] == fromEnv {
				n++
				mode = m.mode
			}
		}
		if n > 1 {
			return mode, errors.New("--tee, --preview and --quiet exclude each other")
		}
		if n == 1 {
			break
		}
	}
	return mode, nil
}

// oneBackground leaves at most one of --background and --background-after
// set: a flag beats the other flag's variable (a shell with
// CAPWRAP_BACKGROUND_AFTER set may still start a job with --background);
// two flags, or two variables, contradict.
func (o *options) oneBackground() error {
	if !o.background || o.backgroundAfter <= 0 {
		return nil
	}
	switch bgEnv, afterEnv := o.fromEnv["background"], o.fromEnv["background-after"]; {
	case afterEnv && !bgEnv:
		o.backgroundAfter = 0
	case bgEnv && !afterEnv:
		o.background = false
	default:
		return fmt.Errorf("%s and %s exclude each other", o.source("background"), o.source("background-after"))
	}
	return nil
}

// checkDurations checks the durations of a run: none negative, a stall
// timeout not 0.
func (o *options) checkDurations() error {
	switch {
	case o.backgroundAfter < 0:
		return fmt.Errorf("invalid %s %v: must not be negative", o.source("background-after"), o.backgroundAfter)
	case o.stallTimeout == 0:
		return fmt.Errorf("invalid %s 0s: must be positive (the default is 10s)", o.source("stall-timeout"))
	}
	for _, v := range []struct {
		name string
		d    time.Duration
	}{{"timeout", o.timeout}, {"kill-after", o.killAfter}, {"drain-timeout", o.drainTimeout}, {"stall-timeout", o.stallTimeout}, {"notice-after", o.noticeAfter}} {
		if v.d < 0 {
			return fmt.Errorf("invalid %s %v: must not be negative", o.source(v.name), v.d)
		}
	}
	return nil
}

// checkRedaction refuses redaction input that would be accepted and do
// nothing (SPEC §6): an empty --redact-pattern, and a --redact-env or
// --redact-allow-env name that is empty or cannot name one variable (it
// holds '=', white space or a comma: a list, where each flag, and its
// CAPWRAP_* variable, takes one name).
func (o *options) checkRedaction() error {
	for _, p := range o.redactPat {
		if p == "" {
			return refusal{fmt.Sprintf("invalid %s \"\": empty pattern", o.source("redact-pattern")),
				"give a regular expression, such as --redact-pattern 'tkt-[0-9a-f]{32}'"}
		}
	}
	for _, f := range []struct {
		flag  string
		names []string
	}{{"redact-env", o.redactEnv}, {"redact-allow-env", o.redactAllowEnv}} {
		for _, name := range f.names {
			switch {
			case name == "":
				return refusal{fmt.Sprintf("invalid %s \"\": empty variable name", o.source(f.flag)),
					fmt.Sprintf("give the name of an environment variable, such as --%s MY_TOKEN", f.flag)}
			case strings.ContainsAny(name, "=, \t\n\r"):
				return refusal{fmt.Sprintf("invalid %s %q: not a variable name", o.source(f.flag), name),
					fmt.Sprintf("one name each: repeat --%s NAME for more (%s holds one name)", f.flag, envName(f.flag))}
			}
		}
	}
	return nil
}

// posixShells are the shells -c runs STRING with when $SHELL is one of them.
var posixShells = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true}
})

// shellArgv is the command line of -c STRING: $SHELL when it is a
// POSIX-family shell, else /bin/sh, with -c STRING.
func shellArgv(script string, getenv func(string) string) []string {
	sh := getenv("SHELL")
	if !posixShells()[filepath.Base(sh)] || !filepath.IsAbs(sh) {
		sh = "/bin/sh"
	}
	return []string{sh, "-c", script}
}

// shellWords are the builtins and keywords of POSIX shells (and of bash
// and zsh) that are no program: `capwrap -- cd ..` cannot run them.
var shellWords = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"cd": true, "source": true, ".": true, "export": true, "unset": true, "set": true, "alias": true,
		"unalias": true, "eval": true, "exec": true, "exit": true, "return": true, "shift": true, "trap": true,
		"umask": true, "ulimit": true, "readonly": true, "local": true, "declare": true, "typeset": true,
		"let": true, "shopt": true, "pushd": true, "popd": true, "dirs": true, "jobs": true, "fg": true,
		"bg": true, "hash": true, "builtin": true, "history": true, "setopt": true, "unsetopt": true,
		"if": true, "then": true, "else": true, "elif": true, "fi": true, "for": true, "while": true,
		"until": true, "do": true, "done": true, "case": true, "esac": true, "function": true,
		"select": true, "{": true, "}": true, "[[": true, "]]": true, "!": true, "time": true,
	}
})

// assignment is a shell variable assignment word, VAR=value. Compiled at
// first use, not in the package's init: only a command that was not found
// and export's usage error need it (issue 28).
var assignment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`) })

// bashOnly are the shellWords that /bin/sh (a POSIX sh such as dash) does
// not know: for them the hint names bash -c rather than -c when -c would
// run /bin/sh.
var bashOnly = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"source": true, "declare": true, "typeset": true, "let": true, "shopt": true, "pushd": true,
		"popd": true, "dirs": true, "function": true, "select": true, "[[": true, "]]": true,
		"history": true, "builtin": true, "setopt": true, "unsetopt": true,
	}
})

// shellSyntaxHint explains a command that was not found because its name
// is shell syntax (a builtin, a keyword, an assignment), and names the
// command to run it with (-c, or bash -c for bash's own words when -c
// would run /bin/sh); "" when it is not shell syntax. getenv reads SHELL.
func shellSyntaxHint(argv []string, getenv func(string) string) string {
	name := argv[0]
	var what string
	switch {
	case shellWords()[name]:
		what = fmt.Sprintf("%s is shell syntax (a builtin or keyword), not a program", name)
	case assignment().MatchString(name):
		what = fmt.Sprintf("%s is a shell assignment, not a program", shellQuoteSyntax(name))
	default:
		return ""
	}
	words := make([]string, len(argv))
	for i, w := range argv {
		words[i] = shellQuoteSyntax(w)
	}
	line := strings.Join(words, " ")
	if len(line) > 60 {
		line = line[:57] + "..."
	}
	run := "capwrap -c"
	if bashOnly()[name] && shellArgv("", getenv)[0] == "/bin/sh" {
		run = "capwrap -- bash -c"
	}
	return fmt.Sprintf("%s: run shell syntax with %s %s", what, run, text.ShellQuote(line))
}

// shellQuoteSyntax quotes a word of a command line meant for a shell: a
// keyword or builtin stays bare (quoted, [[ or ! would be no keyword), an
// assignment keeps NAME= bare and quotes its value, anything else is
// shellQuoteWord.
func shellQuoteSyntax(w string) string {
	if shellWords()[w] {
		return w
	}
	if loc := assignment().FindStringIndex(w); loc != nil {
		if w[loc[1]:] == "" {
			return w
		}
		return w[:loc[1]] + text.ShellQuote(w[loc[1]:])
	}
	return text.ShellQuote(w)
}

// isCapwrap reports whether name, a command to run, is capwrap: a program
// named capwrap, as given or as found through PATH. (Not "the same file as
// this program": one binary may serve under several names, as this one's
// tests do.) The name's last element tells both: what PATH finds for a
// bare name is DIR/name, so there is nothing to look up (a lookup cost
// every run a stat of each PATH directory, made again by the spawn).
func isCapwrap(name string) bool {
	return filepath.Base(name) == "capwrap"
}

// nested makes cfg, the run of a capwrap that this capwrap was asked to run
// (`capwrap --timeout 10m -- capwrap -- make`), a pass-through (SPEC §1:
// one capture, the inner one's). What was set on this capwrap's command
// line reaches the inner one: a flag as its CAPWRAP_* variable, so that the
// inner one's own flags still beat it (SPEC §4), and a repeatable
// --redact-* flag ahead of its own arguments, where it adds to them. This
// capwrap's --timeout and --kill-after then only back the inner one up:
// each is lengthened by --kill-after and --drain-timeout and 5 seconds, so
// that the inner one ends its command and prints its receipt first.
func (o *options) nested(cfg *runner.Config) {
	cfg.PassThrough = true
	var env, flags []string
	o.flags.Visit(func(f *pflag.Flag) {
		switch {
		case o.fromEnv[f.Name] || noVariable(f.Name) || f.Name == "background" || f.Name == "background-after":
		case f.Value.Type() == "stringArray":
			for _, v := range f.Value.(pflag.SliceValue).GetSlice() {
				flags = append(flags, "--"+f.Name+"="+v)
			}
		default:
			env = append(env, envName(f.Name)+"="+f.Value.String())
		}
	})
	for _, kv := range env {
		cfg.Environ = setEnv(cfg.Environ, kv)
	}
	cfg.Argv = append(append([]string{cfg.Argv[0]}, flags...), cfg.Argv[1:]...)
	margin := cfg.KillAfter + cfg.DrainTimeout + 5*time.Second
	if cfg.Timeout > 0 {
		cfg.Timeout += margin
	}
	cfg.KillAfter = margin
}

// setEnv is environ with kv ("NAME=value") in place of any NAME= entry.
func setEnv(environ []string, kv string) []string {
	prefix := kv[:strings.IndexByte(kv, '=')+1]
	out := make([]string, 0, len(environ)+1)
	for _, e := range environ {
		if !strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return append(out, kv)
}
