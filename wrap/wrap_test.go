package wrap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// caught is the test binary's sigcatch: the forwarded signals, caught from
// the start of the tests and given to every Run (Config.Caught). Which of
// them the test binary started with ignored is read before the catch.
var (
	intIgnoredAtStart = signal.Ignored(syscall.SIGINT)
	hupIgnoredAtStart = signal.Ignored(syscall.SIGHUP)
	caught            = make(chan os.Signal, 32)
)

func init() {
	signal.Notify(caught, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
}

// ignoredAtStart reports whether the test binary started with sig ignored.
func ignoredAtStart(sig syscall.Signal) bool {
	return sig == syscall.SIGINT && intIgnoredAtStart || sig == syscall.SIGHUP && hupIgnoredAtStart
}

// buffer is a goroutine-safe bytes.Buffer for a stream's writer.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// patience is the deadline of a wait for a condition: generous, since a
// busy machine may take seconds to start a shell, and only a test that
// already failed waits that long.
const patience = 30 * time.Second

// waitFile waits until the file name exists (a command's sign that it has
// got somewhere), up to patience.
func waitFile(name string) error {
	deadline := time.Now().Add(patience)
	for {
		if _, err := os.Stat(name); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s after %v", name, patience)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// groupGone waits for process group pgid to have no live member. A member
// sent SIGKILL as Run returned may take a moment to die on a busy machine;
// one nobody killed lives 30 s in these tests, and 10 s is the bound.
func groupGone(pgid int) bool {
	deadline := time.Now().Add(10 * time.Second)
	for groupAlive(pgid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func run(t *testing.T, cfg Config, args ...string) (Result, string, string) {
	t.Helper()
	var out, errb buffer
	cfg.Args = args
	cfg.Stdout, cfg.Stderr = &out, &errb
	cfg.Caught = caught
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = time.Second
	}
	if cfg.KillAfter == 0 {
		cfg.KillAfter = 5 * time.Second
	}
	res := Run(cfg)
	return res, out.String(), errb.String()
}

func TestExitStatus(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		state    State
		code     int
		signal   syscall.Signal
		notFound bool
		notExec  bool
	}{
		{"zero", []string{"true"}, StateExited, 0, 0, false, false},
		{"one", []string{"false"}, StateExited, 1, 0, false, false},
		{"three", []string{"sh", "-c", "exit 3"}, StateExited, 3, 0, false, false},
		{"255", []string{"sh", "-c", "exit 255"}, StateExited, 255, 0, false, false},
		{"sigkill", []string{"sh", "-c", "kill -KILL $$"}, StateSignaled, -1, syscall.SIGKILL, false, false},
		{"sigsegv", []string{"sh", "-c", "kill -SEGV $$"}, StateSignaled, -1, syscall.SIGSEGV, false, false},
		{"not found", []string{"no-such-command-capwrap-test"}, StateNotStarted, -1, 0, true, false},
		{"not found path", []string{"/nonexistent/capwrap/cmd"}, StateNotStarted, -1, 0, true, false},
		{"directory", []string{"/"}, StateNotStarted, -1, 0, false, true},
		{"not executable", []string{"/etc/hostname"}, StateNotStarted, -1, 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _, _ := run(t, Config{}, tt.args...)
			notFound, notExec := errors.Is(res.StartErr, ErrNotFound), errors.Is(res.StartErr, ErrNotExecutable)
			if res.State != tt.state || res.ExitCode != tt.code || res.Signal != tt.signal ||
				notFound != tt.notFound || notExec != tt.notExec {
				t.Errorf("got state=%s code=%d signal=%v notfound=%v notexec=%v (err %v), want %s %d %v %v %v",
					res.State, res.ExitCode, res.Signal, notFound, notExec, res.StartErr,
					tt.state, tt.code, tt.signal, tt.notFound, tt.notExec)
			}
		})
	}
}

func TestBothStreamsDrainedConcurrently(t *testing.T) {
	// 400,000 bytes to stderr first: a reader busy with stdout only would
	// deadlock here, the pipe's capacity being far smaller.
	res, out, errs := run(t, Config{}, "sh", "-c", "yes err | head -n 100000 >&2; yes out | head -n 100000; exit 4")
	if res.ExitCode != 4 {
		t.Fatalf("exit %d", res.ExitCode)
	}
	if out != strings.Repeat("out\n", 100000) || errs != strings.Repeat("err\n", 100000) {
		t.Fatalf("stdout %d bytes, stderr %d bytes", len(out), len(errs))
	}
	if res.ObservedStdout != 400000 || res.ObservedStderr != 400000 {
		t.Fatalf("observed %d/%d", res.ObservedStdout, res.ObservedStderr)
	}
	if res.DrainTimedOut {
		t.Fatal("drain timed out")
	}
}

func TestDrainTimeoutWithGrandchildHoldingPipe(t *testing.T) {
	start := time.Now()
	res, out, _ := run(t, Config{DrainTimeout: 300 * time.Millisecond}, "sh", "-c", "sleep 30 & echo started")
	// Held open, the drain would last 30 s; 5 s is generous for a busy
	// machine to end it 300 ms after the exit.
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	if !res.DrainTimedOut || res.ExitCode != 0 || out != "started\n" {
		t.Fatalf("drain timed out %v, exit %d, out %q", res.DrainTimedOut, res.ExitCode, out)
	}
}

func TestTimeoutLeavesNoSurvivor(t *testing.T) {
	var pid int
	res, _, _ := run(t, Config{Timeout: 200 * time.Millisecond, KillAfter: 500 * time.Millisecond,
		OnStart: func(p int) { pid = p }},
		"sh", "-c", "trap '' TERM; sleep 30 & sleep 30 & wait")
	if res.State != StateSignaled || !res.TimedOut {
		t.Fatalf("state %s", res.State)
	}
	if !groupGone(pid) {
		t.Fatalf("process group %d still has live members", pid)
	}
}

func TestSignalsForwardedToGroup(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT, syscall.SIGUSR1} {
		t.Run(sig.String(), func(t *testing.T) {
			if ignoredAtStart(sig) {
				t.Skipf("the test started with %v ignored: capwrap leaves it so", sig)
			}
			// Sent once the child runs; caught, it waits on the channel
			// until Run forwards it.
			cfg := Config{OnStart: func(int) { _ = syscall.Kill(syscall.Getpid(), sig) }}
			res, _, _ := run(t, cfg, "sleep", "10")
			if res.State != StateSignaled || res.Signal != sig {
				t.Fatalf("state %s signal %v, want signaled by %v", res.State, res.Signal, sig)
			}
		})
	}
}

func TestPTYStreamsAreTerminalsAndExact(t *testing.T) {
	if err := PTYAvailable(); err != nil {
		t.Skipf("no pty on this machine: %v", err)
	}
	script := `[ -t 1 ] && [ -t 2 ] && printf 'a\nb\r\n\ncolour \033[31mred\033[0m \377\n'; printf 'E\n' >&2`
	res, out, errs := run(t, Config{PTY: PTYBoth}, "sh", "-c", script)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d", res.ExitCode)
	}
	if want := "a\nb\r\n\ncolour \033[31mred\033[0m \377\n"; out != want {
		t.Fatalf("stdout %q, want %q", out, want)
	}
	if errs != "E\n" {
		t.Fatalf("stderr %q", errs)
	}
}

// TestPTYPerStream: SPEC §2, each stream is a pty only when the mode names
// it, the other a pipe (--pty auto gives a stream a pty only when capwrap's
// own corresponding stream is a terminal).
func TestPTYPerStream(t *testing.T) {
	if err := PTYAvailable(); err != nil {
		t.Skipf("no pty on this machine: %v", err)
	}
	script := `if [ -t 1 ]; then o=tty; else o=pipe; fi; if [ -t 2 ]; then e=tty; else e=pipe; fi; echo "$o $e"`
	for _, tc := range []struct {
		mode PTYMode
		want string
	}{{PTYNone, "pipe pipe\n"}, {PTYStdout, "tty pipe\n"}, {PTYStderr, "pipe tty\n"}, {PTYBoth, "tty tty\n"}} {
		if _, out, _ := run(t, Config{PTY: tc.mode}, "sh", "-c", script); out != tc.want {
			t.Errorf("mode %b: the command saw %q, want %q", tc.mode, out, tc.want)
		}
	}
}

// TestCancelledBeforeStart: issue 23, a SIGINT or SIGTERM caught while
// capwrap was starting cancels the run: the command is not started, the
// result names the signal; a SIGWINCH before the start is dropped.
func TestCancelledBeforeStart(t *testing.T) {
	dir := t.TempDir()
	ran := dir + "/ran"
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if ignoredAtStart(sig) {
			continue
		}
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		for len(caught) == 0 { // delivered by the runtime's signal goroutine
			time.Sleep(time.Millisecond)
		}
		res, _, _ := run(t, Config{}, "touch", ran)
		if res.State != StateNotStarted || res.Forwarded != sig || !errors.Is(res.StartErr, ErrCancelled) {
			t.Errorf("%v before the start: state %s, forwarded %v, err %v", sig, res.State, res.Forwarded, res.StartErr)
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatalf("%v before the start: the command ran", sig)
		}
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
	for len(caught) == 0 {
		time.Sleep(time.Millisecond)
	}
	if res, _, _ := run(t, Config{}, "touch", ran); res.State != StateExited || res.ExitCode != 0 {
		t.Errorf("after a SIGWINCH before the start: state %s, exit %d, err %v", res.State, res.ExitCode, res.StartErr)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("after a SIGWINCH before the start the command did not run: %v", err)
	}
}

func TestPTYDrainTimeout(t *testing.T) {
	if err := PTYAvailable(); err != nil {
		t.Skipf("no pty on this machine: %v", err)
	}
	start := time.Now()
	res, out, _ := run(t, Config{PTY: PTYBoth, DrainTimeout: 300 * time.Millisecond}, "sh", "-c", "sleep 30 & echo started")
	// As in TestDrainTimeoutWithGrandchildHoldingPipe: 30 s held, 5 s generous.
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	if !res.DrainTimedOut || out != "started\n" {
		t.Fatalf("drain timed out %v, out %q", res.DrainTimedOut, out)
	}
}

func TestGroupAlive(t *testing.T) {
	var pid int
	started := make(chan struct{})
	done := make(chan Result)
	go func() {
		res, _, _ := run(t, Config{OnStart: func(p int) { pid = p; close(started) }}, "sleep", "10")
		done <- res
	}()
	<-started
	if !groupAlive(pid) {
		t.Fatalf("group %d of a running sleep reported dead", pid)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-done
	if groupAlive(pid) {
		t.Fatalf("group %d reported alive after SIGKILL and reaping", pid)
	}
}

// exitedWith and killedBy are wait statuses as wait4(2) reports them on
// Linux: the exit code in the second byte, or the signal in the low seven
// bits (0x80 set when a core was dumped).
func exitedWith(code int) syscall.WaitStatus         { return syscall.WaitStatus(code << 8) }
func killedBy(sig syscall.Signal) syscall.WaitStatus { return syscall.WaitStatus(sig) }

func TestSetState(t *testing.T) {
	tests := []struct {
		name     string
		ws       syscall.WaitStatus
		timedOut bool
		state    State
		code     int
		signal   syscall.Signal
	}{
		{"exit 0", exitedWith(0), false, StateExited, 0, 0},
		{"exit 3", exitedWith(3), false, StateExited, 3, 0},
		{"exit 255", exitedWith(255), false, StateExited, 255, 0},
		{"sigterm", killedBy(syscall.SIGTERM), false, StateSignaled, -1, syscall.SIGTERM},
		{"sigsegv with core", killedBy(syscall.SIGSEGV) | 0x80, false, StateSignaled, -1, syscall.SIGSEGV},
		{"timeout, exited", exitedWith(143), true, StateExited, 143, 0},
		{"timeout, sigterm", killedBy(syscall.SIGTERM), true, StateSignaled, -1, syscall.SIGTERM},
		{"timeout, sigkill", killedBy(syscall.SIGKILL), true, StateSignaled, -1, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Result{ExitCode: -1, TimedOut: tt.timedOut}
			res.setState(tt.ws)
			if res.State != tt.state || res.ExitCode != tt.code || res.Signal != tt.signal {
				t.Errorf("got %s %d %v, want %s %d %v", res.State, res.ExitCode, res.Signal, tt.state, tt.code, tt.signal)
			}
		})
	}
}

// TestCommand: the command gets capwrap's stdin and a process group of
// its own, and is never made the terminal's foreground group at the spawn,
// whether capwrap does job control or not (SPEC §2: the terminal stays
// with the shell's job until the command asks for it).
func TestCommand(t *testing.T) {
	for _, tty := range []*os.File{nil, os.Stdin} {
		cmd := command(Config{Args: []string{"sh", "-c", "true"}, Env: []string{"A=1"}, TTY: tty})
		if cmd.Err != nil || cmd.Stdin != os.Stdin || len(cmd.Env) != 1 || len(cmd.Args) != 3 {
			t.Fatalf("tty %v: err %v, stdin %v, env %q, args %q", tty != nil, cmd.Err, cmd.Stdin, cmd.Env, cmd.Args)
		}
		a := cmd.SysProcAttr
		if !a.Setpgid || a.Pgid != 0 || a.Foreground || a.Setsid {
			t.Errorf("tty %v: SysProcAttr %+v", tty != nil, *a)
		}
	}
	if cmd := command(Config{Args: []string{"no-such-command-capwrap-test"}}); cmd.Err == nil {
		t.Error("no Err for a command not in PATH")
	}
	if cmd := command(Config{Args: []string{"true"}, Stdin: os.Stderr}); cmd.Stdin != os.Stderr {
		t.Errorf("Config.Stdin not given: stdin %v", cmd.Stdin)
	}
}

// TestForwardedSignalEscalates: SPEC §3, after a forwarded SIGTERM a group
// still alive KillAfter later gets SIGKILL, as timeout -k does: a child that
// ignores SIGTERM, and a descendant that does once the direct child is gone.
func TestForwardedSignalEscalates(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		signal syscall.Signal // the direct child's end
	}{
		// The process that ignores SIGTERM creates the file $0 once its
		// trap is set; the SIGTERM is sent then.
		{"child ignores SIGTERM", `trap "" TERM; : >"$0"; sleep 30`, syscall.SIGKILL},
		{"descendant ignores SIGTERM", `(trap "" TERM; : >"$0"; exec sleep 30) >/dev/null 2>&1 & exec sleep 30`, syscall.SIGTERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pid atomic.Int64
			ready := t.TempDir() + "/ready"
			sent := make(chan time.Time, 1)
			cfg := Config{KillAfter: 300 * time.Millisecond, OnStart: func(p int) {
				pid.Store(int64(p))
				go func() {
					if err := waitFile(ready); err != nil {
						t.Error(err)
					}
					sent <- time.Now()
					_ = syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
				}()
			}}
			done := make(chan Result, 1)
			go func() { res, _, _ := run(t, cfg, "sh", "-c", tc.script, ready); done <- res }()
			var res Result
			select {
			case res = <-done:
			case <-time.After(patience + 10*time.Second):
				_ = syscall.Kill(-int(pid.Load()), syscall.SIGKILL)
				<-done
				t.Fatal("the group outlived the forwarded SIGTERM: no SIGKILL after kill-after")
			}
			// The SIGKILL is due 300 ms after the SIGTERM; without it the
			// group would live 30 s. 5 s is generous for a busy machine.
			if d := time.Since(<-sent); d > 5*time.Second {
				t.Errorf("took %v after the SIGTERM", d)
			}
			if res.State != StateSignaled || res.Signal != tc.signal || res.Forwarded != syscall.SIGTERM || !res.Escalated {
				t.Errorf("state %s signal %v forwarded %v escalated %v, want signaled by %v after a forwarded SIGTERM and SIGKILL",
					res.State, res.Signal, res.Forwarded, res.Escalated, tc.signal)
			}
			if !groupGone(int(pid.Load())) {
				t.Errorf("process group %d still has live members", pid.Load())
			}
		})
	}
}

// slowWriter takes d over each Write: a consumer slower than the child, so
// that the pipe is full when the child exits.
type slowWriter struct {
	buffer
	d time.Duration
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(w.d)
	return w.buffer.Write(p)
}

// TestDrainTimeoutZeroKeepsWhatTheChildWrote: SPEC §3, the drain timeout is
// about end of file only. What the direct child wrote before it exited is
// in the pipe (or the pty), and is captured even with --drain-timeout 0.
// The writer is slower than the child, so the pipe is full at the exit.
func TestDrainTimeoutZeroKeepsWhatTheChildWrote(t *testing.T) {
	for _, tc := range []struct {
		name string
		pty  PTYMode
		size int
	}{{"pipe", PTYNone, 3000000}, {"pty", PTYBoth, 500000}} {
		t.Run(tc.name, func(t *testing.T) {
			if err := PTYAvailable(); tc.pty != PTYNone && err != nil {
				t.Skipf("no pty on this machine: %v", err)
			}
			out, errb := &slowWriter{d: 2 * time.Millisecond}, &buffer{}
			res := Run(Config{Args: []string{"head", "-c", strconv.Itoa(tc.size), "/dev/zero"}, PTY: tc.pty,
				Stdout: out, Stderr: errb, DrainTimeout: 0, KillAfter: 5 * time.Second})
			if res.ExitCode != 0 {
				t.Fatalf("exit %d (%v)", res.ExitCode, res.StartErr)
			}
			if got := len(out.String()); res.ObservedStdout != int64(tc.size) || got != tc.size {
				t.Errorf("observed %d bytes, delivered %d, want %d", res.ObservedStdout, got, tc.size)
			}
			if res.DrainTimedOut {
				t.Error("drain timed out, though the child's streams had ended")
			}
		})
	}
}

// stallWriter blocks its first Write until the child has exited and stall
// more has passed: a disk that stalls just when the child ends. Then it
// returns, and after (a moment, in the background) it calls release.
type stallWriter struct {
	buffer
	pid     atomic.Int64
	stall   time.Duration
	after   time.Duration
	release func()
	once    sync.Once
}

func (w *stallWriter) Write(p []byte) (int, error) {
	w.once.Do(func() {
		for syscall.Kill(int(w.pid.Load()), 0) == nil { // until reaped
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(w.stall)
		go func() { time.Sleep(w.after); w.release() }()
	})
	return w.buffer.Write(p)
}

// TestDrainClockStopsWhileWriting: SPEC §3, a slow disk is not the drain
// timeout's business. stdout's pump is blocked writing for 3 s after the
// child exits, longer than the drain timeout of 2 s; its drain clock does
// not run meanwhile. A descendant holding stdout writes its line and exits
// when told to (it reads a FIFO), 200 ms after the pump's Write returned:
// within the drain timeout counted from there (1.8 s to spare for a busy
// machine), but long after one counted from the exit (a pump that counted
// the Write would find its deadline passed and the descendant still
// holding the pipe: cut, drain_timeout).
func TestDrainClockStopsWhileWriting(t *testing.T) {
	fifo := t.TempDir() + "/go"
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	out, errb := &stallWriter{stall: 3 * time.Second, after: 200 * time.Millisecond, release: func() {
		// Opening blocks until the descendant opens the FIFO to read.
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString("go\n")
			f.Close()
		}
		released <- err
	}}, &buffer{}
	res := Run(Config{Args: []string{"sh", "-c", `(read x <"$0"; echo late) 2>/dev/null & echo early`, fifo},
		Stdout: out, Stderr: errb, DrainTimeout: 2 * time.Second, KillAfter: 5 * time.Second,
		OnStart: func(pid int) { out.pid.Store(int64(pid)) }})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d (%v)", res.ExitCode, res.StartErr)
	}
	if got := out.String(); got != "early\nlate\n" {
		t.Errorf("delivered %q, want early and late", got)
	}
	if res.DrainTimedOut {
		t.Error("drain timed out: the time spent writing counted")
	}
	if err := <-released; err != nil {
		t.Error(err)
	}
}

// TestDrainTimeoutWithChattyDescendant: a descendant that keeps writing
// after the direct child exited cannot hold the drain open: it ends about
// DrainTimeout later, partial. (The descendant, yes, never ends by itself,
// however fast the pipe; the test ends its group.)
func TestDrainTimeoutWithChattyDescendant(t *testing.T) {
	start := time.Now()
	var pid atomic.Int64
	t.Cleanup(func() { _ = syscall.Kill(-int(pid.Load()), syscall.SIGKILL) })
	res := Run(Config{Args: []string{"sh", "-c", "yes & echo started"},
		Stdout: io.Discard, Stderr: io.Discard, DrainTimeout: 300 * time.Millisecond, KillAfter: 5 * time.Second,
		OnStart: func(p int) { pid.Store(int64(p)) }})
	t.Logf("took %v, read %d bytes", time.Since(start), res.ObservedStdout)
	// A drain held open would last as long as yes writes: for good. 5 s is
	// generous for one cut 300 ms after the exit on a busy machine.
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	if !res.DrainTimedOut || res.ExitCode != 0 {
		t.Fatalf("drain timed out %v, exit %d", res.DrainTimedOut, res.ExitCode)
	}
}
