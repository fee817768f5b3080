package job

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/capwrap/capwrap/internal/guard"
	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/internal/sigcatch"
	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
	"github.com/capwrap/capwrap/wrap"
)

// startedWithin bounds how long a launch waits for the supervisor to say
// the child runs (or has ended).
const startedWithin = 30 * time.Second

// Launch is `capwrap --background` and `--background-after` (SPEC §10): it
// starts a supervisor, capwrap itself run as "capwrap __capwrap-supervise
// attach|detach ARGS" (args are capwrap's own arguments) in a session of
// its own, which runs the command as a job. With detach (--background) it
// prints the launch receipt once the command runs and returns 0. Else it
// waits: a job that ends within after was presented by the supervisor on
// capwrap's own output as a foreground run, and its status (and signal to
// re-raise) is returned; one still running then is handed back (75).
// Signals capwrap receives meanwhile go to the supervisor, which forwards
// them; should capwrap be killed, the supervisor stops the job. With
// cfg.NoticeAfter > 0 the supervisor prints the running notice while
// attached (SPEC §5), and a hand-back's preview makes room for it.
func Launch(cfg runner.Config, args []string, detach bool, after time.Duration) (int, syscall.Signal) {
	d := cfg.Diag
	t0 := time.Now()
	link, sup, err := startSupervisor(cfg, args, detach)
	if err != nil {
		d.Errorf("cannot start a supervisor for the job: %v", err)
		return runner.ExitUsage, 0
	}
	defer link.Close()
	sigs := sigcatch.C()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(link)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	startTimer := time.NewTimer(startedWithin)
	defer startTimer.Stop()
	var handBack <-chan time.Time
	var started *receipt.Receipt
	for {
		select {
		case s := <-sigs:
			sup.Signal(s)
		case <-startTimer.C:
			d.Errorf("the job's supervisor did not start the command within %v", startedWithin)
			sup.Kill()
			return runner.ExitUsage, 0
		case <-handBack:
			handBack = nil
			fmt.Fprintln(link, "release")
		case line, ok := <-lines:
			if !ok {
				d.Errorf("the job's supervisor ended without a word")
				return runner.ExitUsage, 0
			}
			verb, rest, _ := strings.Cut(line, " ")
			switch verb {
			case "started":
				startTimer.Stop()
				if started, err = readReceiptLine(rest); err != nil {
					d.Errorf("the job's supervisor sent a bad receipt: %v", err)
					return runner.ExitUsage, 0
				}
				if detach {
					pauseForTest()
					status, sig := launched(cfg, started)
					// The ID is out: only now may the launcher's end
					// leave the job running (an end before "ack" stops
					// it, Supervisor.serveLink).
					fmt.Fprintln(link, "ack")
					return status, sig
				}
				handBack = time.After(max(0, after-time.Since(t0)))
			case "released":
				return handedBack(cfg, runner.ChooseMode(cfg.Mode, cfg.Stdin, cfg.Stdout, cfg.Stderr), started, after)
			case "exit":
				// The supervisor may still print (a hint after its
				// run): its end of the link closes when it has.
				status, sig := exitLine(rest)
				waitEOF(lines, linger)
				return status, sig
			}
		}
	}
}

// LaunchPauseEnv names a file that a --background launcher creates, then
// pauses for up to a minute, between the job's start and the printing of
// its ID: a test kills it there (issue 26). Unset, there is no pause.
const LaunchPauseEnv = "CAPWRAP_TEST_LAUNCH_PAUSE"

// pauseForTest is LaunchPauseEnv's pause.
func pauseForTest() {
	name := os.Getenv(LaunchPauseEnv)
	if name == "" {
		return
	}
	if err := os.WriteFile(name, nil, 0o600); err == nil {
		time.Sleep(time.Minute)
	}
}

// linger bounds how long a launcher waits, once told the job's status, for
// the supervisor to finish printing and close the link.
const linger = 2 * time.Second

// waitEOF drains lines until it is closed or d has passed.
func waitEOF(lines <-chan string, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case _, ok := <-lines:
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}

// startSupervisor starts the supervisor with the link on its descriptor 3.
func startSupervisor(cfg runner.Config, args []string, detach bool) (*os.File, *os.Process, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	link, theirs, err := wrap.SocketPair()
	if err != nil {
		return nil, nil, err
	}
	defer theirs.Close()
	mode := "attach"
	if detach {
		mode = "detach"
	}
	// The supervisor gets the link and capwrap's stdout and stderr, and
	// nothing else of its caller's (a descriptor the caller left open
	// would be held by the job as long as it runs, SPEC §10).
	wrap.CloseOnExecFrom(3)
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        append([]string{"capwrap", SuperviseArg, mode}, args...),
		Stdout:      cfg.Stdout,
		Stderr:      cfg.Stderr,
		ExtraFiles:  []*os.File{theirs},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		link.Close()
		return nil, nil, err
	}
	go cmd.Wait() // reaped if it ends while capwrap still runs
	return link, cmd.Process, nil
}

// launched prints a --background launch: one human line on stderr and the
// live receipt as footer (process.state running, its pid).
func launched(cfg runner.Config, rc *receipt.Receipt) (int, syscall.Signal) {
	id := "?"
	if rc.ID != nil {
		id = *rc.ID
	}
	pid := 0
	if rc.Process.PID != nil {
		pid = *rc.Process.PID
	}
	dirArg := ""
	if rc.AbsDir != nil {
		dirArg = store.ReadArgFor(filepath.Dir(*rc.AbsDir), cfg.Getenv)
	}
	cfg.Diag.Hintf("job %s runs in the background (pid %d): %s %s, %s %s --follow, %s %s",
		id, pid, text.VerbCommand(dirArg, "wait"), id, text.VerbCommand(dirArg, "read"), id, text.VerbCommand(dirArg, "stop"), id)
	footer, _ := rc.Footer(false)
	cfg.Stdout.Write(footer)
	return 0, 0
}

// handedBack prints a --background-after hand-back from the job's capture.
// The capture is read under the stall timeout (a hung file system must not
// keep the caller from learning the job's ID); a job that ended meanwhile
// is shown as wait would, with its own status. --receipt-file gets the
// running receipt now: the job, released, leaves that file to the
// caller's later commands.
func handedBack(cfg runner.Config, mode runner.Mode, rc *receipt.Receipt, after time.Duration) (int, syscall.Signal) {
	if rc.ID == nil || rc.Dir == nil {
		cfg.Diag.Errorf("the job has no capture to hand back")
		return runner.ExitUsage, 0
	}
	v := View{StdoutChars: cfg.StdoutChars, StderrChars: cfg.StderrChars,
		PreviewBytes: cfg.PreviewBytes, Mode: mode, Stdout: cfg.Stdout, Stderr: cfg.Stderr, Diag: cfg.Diag,
		Stall: cfg.Limits.StallTimeout}
	e := store.Entry{ID: *rc.ID, Receipt: rc}
	var text []byte
	var err error
	herr := guard.New(v.Stall).Do("reading the job's capture", func() {
		if v.Dir, err = store.OpenExisting(filepath.Dir(*rc.Dir)); err != nil {
			return
		}
		v.DirArg = v.Dir.ReadArg(cfg.Getenv)
		if e, err = v.Dir.Entry(*rc.ID); err == nil && !e.Final && mode == runner.ModePreview {
			text, err = v.previewSoFar(e, share{}, noticed(cfg, rc))
		}
	}, nil)
	switch {
	case herr != nil:
		cfg.Diag.Warnf("capture %s: %v: handed back without a preview", *rc.ID, herr)
		e = store.Entry{ID: *rc.ID, Receipt: rc}
	case err != nil:
		cfg.Diag.Warnf("capture %s: %v: handed back without a preview", *rc.ID, store.UnwrapPath(err))
	case e.Final:
		defer v.Dir.Close()
		status, sig, _ := v.final(e, share{})
		return status, sig
	default:
		defer v.Dir.Close()
	}
	if v.Dir == nil && rc.AbsDir != nil {
		v.DirArg = store.ReadArgFor(filepath.Dir(*rc.AbsDir), cfg.Getenv)
	}
	if f := cfg.ReceiptFile; f != "" {
		if err := runner.WriteReceiptFile(f, e.Receipt, guard.New(v.Stall).Stall()); err != nil {
			cfg.Diag.Warnf("cannot write --receipt-file %s: %v", f, err)
		}
	}
	if err := v.handBack(e, text, after); err != nil {
		cfg.Diag.Errorf("%v", err)
		return runner.ExitUsage, 0
	}
	return ExitHandedBack, 0
}

// noticed is the most characters, line end included, of the running
// notice that the supervisor of job rc may have printed on the launcher's
// output before its hand-back (runner.NoticeLine; issue 24): taken from the
// hand-back's preview, as a foreground run takes it from its own, so that
// all of it stays within a run's bound (SPEC §5). Whether the notice's
// timer fired before the release is not known here: it is counted when it
// could have (preview mode, a capture to name, a notice due before the
// hand-back), with the longest --dir it can name, the absolute path.
func noticed(cfg runner.Config, rc *receipt.Receipt) int {
	if cfg.NoticeAfter <= 0 || cfg.Keep == runner.Never || rc.ID == nil || rc.AbsDir == nil {
		return 0
	}
	return utf8.RuneCountInString(runner.NoticeLine(*rc.ID, filepath.Dir(*rc.AbsDir), cfg.NoticeAfter)) + 1
}

// exitLine decodes "STATUS SIGNAL".
func exitLine(s string) (int, syscall.Signal) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return runner.ExitUsage, 0
	}
	status, _ := strconv.Atoi(f[0])
	sig, _ := strconv.Atoi(f[1])
	return status, syscall.Signal(sig)
}
