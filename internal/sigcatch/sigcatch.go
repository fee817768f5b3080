// Package sigcatch catches the signals capwrap forwards to its command from
// the first moment of the process (SPEC §3, issue 23): a SIGINT or SIGTERM
// that arrives while capwrap is still starting (package initialization,
// opening the tool-outputs directory, starting the watchdog) waits on a
// channel instead of killing capwrap, so the run can still end with a
// receipt and the right exit status.
//
// Catching starts in this package's init. Go initializes the packages of a
// program in import-path order as soon as their own imports are ready, and
// this one needs only os/signal: it runs before the other packages do. The
// catch is made before init returns, not overlapped with the other
// packages' init: os/signal enables each signal with a round trip to a
// thread of the runtime's own (about 0.2 ms each on an idle 2-core
// machine), and overlapping those with the other packages' init (tried in
// issue 28) left a signal that came during that init to its default
// action, which kills capwrap before it has caught anything
// (TestStartupSignalStress counts from this init). Init waits for a
// goroutine that makes the catch: that is cheaper than making it on init's
// own goroutine, which is locked to the main thread.
// A capwrap that runs no command (NotRunArgs) and the watchdog's helper
// catch nothing and pay nothing. It knows nothing of processes or files.
//
// A program that is not a run (a verb, a test binary) calls Release, which
// stops catching and re-raises what was caught meanwhile, so that those keep
// the default actions.
package sigcatch

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Forwarded are the signals capwrap passes on to its command's process
// group (SPEC §3), in the order of the spec's list.
var Forwarded = []syscall.Signal{
	syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH,
}

// SIGHUP and SIGINT as the process started with them: ignored (nohup,
// "capwrap ... &" in a script) or not. Read before anything here catches
// them, because signal.Ignored stops reporting an inherited ignore once a
// Notify has caught the signal, even after signal.Stop.
var (
	hupIgnored = signal.Ignored(syscall.SIGHUP)
	intIgnored = signal.Ignored(syscall.SIGINT)
)

// IgnoredAtStart reports whether sig counts as ignored when capwrap
// started, so that it stays ignored in the command and is not forwarded
// (SPEC §3).
//
// The Go runtime keeps an inherited SIG_IGN of SIGHUP and SIGINT, which
// is what hupIgnored and intIgnored see; for every other signal, SIGQUIT
// included, it installs its own handler at start, so an inherited ignore
// of those cannot be observed from Go. The decision: SIGHUP and SIGINT
// ignored at start are neither caught nor forwarded, so they stay SIG_IGN
// and the command inherits that. SIGQUIT counts as ignored when SIGINT
// does: POSIX has a non-interactive shell start an asynchronous list with
// both ignored (nohup ignores SIGHUP only); Catch then ignores SIGQUIT, so
// the command inherits that too. An inherited ignore of SIGTERM, SIGUSR1
// or SIGUSR2 cannot be seen: those are caught and forwarded as usual.
func IgnoredAtStart(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGHUP:
		return hupIgnored
	case syscall.SIGINT, syscall.SIGQUIT:
		return intIgnored
	}
	return false
}

var (
	mu       sync.Mutex
	ch       = make(chan os.Signal, 32)
	catching bool
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == WatchdogArg {
		// The watchdog's helper ignores these signals instead: catching
		// them first would only cost its start-up (see wrap.WatchdogArg).
		return
	}
	if len(os.Args) > 1 && notRun(os.Args[1]) {
		// Not a run: nothing to forward, so nothing is caught (the
		// default actions stay), and the round trips are not paid.
		skipped = true
		return
	}
	// Catch runs on a goroutine of its own, and init waits for it: the
	// catch is made before init returns all the same. Init runs locked
	// to the main thread, so from init each of os/signal's round trips
	// would also hand the main thread's P to another thread and back;
	// from a goroutine that is not locked it costs fewer thread switches
	// (issue 28).
	done := make(chan struct{})
	go func() {
		Catch()
		close(done)
	}()
	<-done
}

// NotRunArgs are the first arguments of a capwrap that runs no command
// (SPEC §1, §8): --help, -h, --version and the verbs, which forward
// nothing (a verb releases what was caught). With one of them first, init
// catches nothing: os/signal enables each signal with a round trip to a
// thread of the runtime's own, and stops it with another. Package main
// checks that its verbs are all listed.
var NotRunArgs = []string{"--help", "-h", "--version", "list", "show", "read", "export", "prune", "wait", "stop", "help"}

// notRun reports whether arg, first on the command line, is one of
// NotRunArgs.
func notRun(arg string) bool {
	for _, a := range NotRunArgs {
		if arg == a {
			return true
		}
	}
	return false
}

// skipped is set by init when the first argument is one of NotRunArgs.
var skipped bool

// Skipped reports whether init caught nothing because the first argument
// is one of NotRunArgs; Catch still catches when called.
func Skipped() bool { return skipped }

// WatchdogArg is wrap.WatchdogArg, the first argument of the watchdog's
// helper, which catches nothing (this package imports no other of
// capwrap's; the root package's TestWatchdogArgSame holds the two equal).
const WatchdogArg = "__capwrap-watchdog"

// Catch starts catching the Forwarded signals that were not ignored at
// start on the channel C returns, and ignores SIGQUIT when it counts as
// ignored at start; when it returns they are caught. It is idempotent. A
// command spawned afterwards gets the default action of what is caught
// (exec resets it) and keeps what is ignored.
func Catch() {
	mu.Lock()
	defer mu.Unlock()
	if catching {
		return
	}
	catching = true
	var sigs []os.Signal
	for _, sig := range Forwarded {
		if !IgnoredAtStart(sig) {
			sigs = append(sigs, sig)
		}
	}
	if IgnoredAtStart(syscall.SIGQUIT) {
		signal.Ignore(syscall.SIGQUIT)
	}
	signal.Notify(ch, sigs...)
}

// C is the channel the caught signals arrive on, from process start on,
// buffered (32 signals; a signal that finds it full is dropped, as a
// pending signal of the same kind is by the kernel). One reader at a time.
func C() <-chan os.Signal { return ch }

// Release stops catching, then sends capwrap each signal caught so far
// whose default action would have ended it, so that a program that is not
// a run (a verb, a test binary) behaves as if nothing had been caught.
// SIGWINCH is dropped. Catch starts catching again.
func Release() {
	mu.Lock()
	defer mu.Unlock()
	if !catching {
		return
	}
	catching = false
	signal.Stop(ch)
	for {
		select {
		case sig := <-ch:
			if s := sig.(syscall.Signal); s != syscall.SIGWINCH {
				_ = syscall.Kill(os.Getpid(), s)
			}
		default:
			return
		}
	}
}
