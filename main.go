//go:build unix

// Command capwrap runs a command, keeps a sanitized copy of everything it
// writes in private files under a tool-outputs directory, and prints a
// bounded preview and a one-line receipt (or, on a terminal, behaves like
// tee). The contract is SPEC.md. This package holds CLI policy only: it
// parses the command line and hands a run over to internal/runner
// (cmd_run.go), or runs a verb (cmd_*.go: reading captures back and
// exporting them, waiting for and stopping background jobs); errors.go
// turns what they return into capwrap's exit status, and main re-raises a
// child's signal after the run has returned.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"syscall"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/capwrap/capwrap/internal/job"
	"github.com/capwrap/capwrap/internal/sigcatch"
	"github.com/capwrap/capwrap/wrap"
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = ""

func main() {
	if len(os.Args) > 2 && os.Args[1] == wrap.WatchdogArg {
		// The watchdog's helper proper ignores these signals (its pipe
		// alone tells it when to act); sigcatch's init caught nothing
		// for it.
		os.Exit(wrap.WatchdogMain(os.Stdin, os.Args[2:]))
	}
	// Signals to forward are caught from process start (package sigcatch's
	// init); a test binary that released them to run a helper catches
	// them again here. With --help,
	// --version or a verb first, nothing is caught (sigcatch.NotRunArgs);
	// a run catches before it starts all the same (capwrap).
	if !sigcatch.Skipped() {
		sigcatch.Catch()
	}
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

// stdio are capwrap's standard streams.
type stdio struct{ in, out, err *os.File }

// helpers are the hidden programs that capwrap starts as itself, named by
// its first argument and given the arguments after it (at least args of
// them; with fewer the name is a command's like any other).
var helpers = map[string]struct {
	args int
	main func(args []string, std stdio) (int, syscall.Signal)
}{
	wrap.WatchdogArg: {0, watchdog},
	job.SuperviseArg: {1, supervise},
}

// run is capwrap without os.Exit: it returns the exit status and the
// signal to re-raise (0 for none), so that every deferred flush and publish
// has run by the time the process ends.
func run(args []string, stdin, stdout, stderr *os.File) (int, syscall.Signal) {
	std := stdio{stdin, stdout, stderr}
	if len(args) > 0 {
		if h, ok := helpers[args[0]]; ok && len(args) > h.args {
			return h.main(args[1:], std)
		}
	}
	return capwrap(args, std, nil)
}

// watchdog is the process that ends a foreground command's group should
// capwrap die (SPEC §3; wrap.WatchdogMain).
func watchdog(args []string, std stdio) (int, syscall.Signal) {
	return wrap.WatchdogMain(std.in, args), 0
}

// supervise is a background job's supervisor (SPEC §10): "detach" or
// "attach", then the launcher's own arguments; the link to the launcher
// is descriptor 3.
func supervise(args []string, std stdio) (int, syscall.Signal) {
	unix.CloseOnExec(3) // the link is the supervisor's alone, not its command's
	sup := job.NewSupervisor(os.NewFile(3, "link"), args[0] == "detach", diag{std.err})
	return capwrap(args[1:], std, sup)
}

// capwrap is the program a user runs: the global flags, then --help,
// --version, a verb, or the run of a command. sup, when not nil,
// supervises the run as a background job.
func capwrap(args []string, std stdio, sup *job.Supervisor) (int, syscall.Signal) {
	d := diag{std.err}
	var o options
	err := o.parse(args)
	rest := o.flags.Args()
	switch {
	case err != nil:
	case o.help:
		printHelp(std.out, "")
	case o.version:
		fmt.Fprintf(std.out, "capwrap %s\n", versionString())
	case o.shell == "" && len(rest) > 0 && o.flags.ArgsLenAtDash() != 0 && isVerb(rest[0]):
		// A verb forwards nothing: Ctrl-C ends it (read --follow, wait)
		// as it ends any program.
		sigcatch.Release()
		e := &env{stdout: std.out, stderr: std.err, getenv: os.Getenv, d: d, global: &o}
		err = runVerb(e, rest[0], rest[1:])
	default:
		sigcatch.Catch() // at once when already caught (see main)
		err = runCommand(&o, args, std, sup)
	}
	return exitStatus(err, d)
}

// verbs are the words that, first on the command line and before any "--",
// select a secondary verb instead of starting a command (SPEC §1).
var verbs = []string{"list", "show", "read", "export", "prune", "wait", "stop", "help"}

// commands are the verbs but help, each with its flags (SPEC §8, §10).
var commands = sync.OnceValue(func() map[string]func() command {
	return map[string]func() command{
		"list": newListCommand, "show": newShowCommand, "read": newReadCommand, "export": newExportCommand,
		"prune": newPruneCommand, "wait": newWaitCommand, "stop": newStopCommand,
	}
})

// command is a verb with its options bound (as restic's newXCommand): a
// new one for each run, addFlags declares its flags on a verb's flag set
// and, once they are parsed, run runs it with its arguments.
type command struct {
	// nargs is the number of arguments it takes: exactly nargs, or at
	// least -nargs when negative.
	nargs    int
	addFlags func(fs *pflag.FlagSet)
	run      func(e *env, args []string) error
}

// runVerb runs the secondary verb name with the arguments after it (SPEC
// §8, §10): with -h or --help it prints the verb's help instead.
func runVerb(e *env, name string, args []string) error {
	if name == "help" {
		return runHelp(e, args)
	}
	newCommand, ok := commands()[name]
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
