package main

// Issue 26: "fatal: morestack on gsignal" was once left on a terminal by an
// early Ctrl-C. TestStartupSignalStress sends capwrap signals at random
// moments of its start-up, thousands of times, and counts what a person or
// a harness would see go wrong: a crash of the Go runtime, a run with no
// receipt, a process left behind, a signal lost.

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Bounds of the stress test: in CI it runs for stressBudget from its start,
// the builds of the two binaries included (whatever fits, at least
// stressMinRuns runs), two runs at a time at most (a 2-core
// machine); -stress.runs N (go test -run TestStartupSignalStress -args
// -stress.runs 10000) runs exactly N instead, for a longer run by hand,
// and -stress.seed S replays a seed. Test flags, not CAPWRAP_ variables:
// capwrap itself reads no such variable (docs_test's TestEnvDocumented).
var (
	stressRuns = flag.Int("stress.runs", 0, "TestStartupSignalStress: run exactly this many runs (0: as many as fit in its budget)")
	stressSeed = flag.Uint64("stress.seed", 0, "TestStartupSignalStress: replay this seed (0: a new one)")
)

const (
	stressBudget  = 45 * time.Second
	stressMinRuns = 200
	stressWorkers = 2
	stressMaxWait = 20 * time.Second // one run's end, a failure guard only
)

// crashSigns are what the Go runtime writes when it dies on its own
// (fatal error, panic, a fault, its goroutine dump).
var crashSigns = []string{"fatal:", "fatal error:", "panic:", "SIGSEGV", "SIGBUS", "goroutine ", "runtime."}

// stressRun is one run's plan and what came of it.
type stressRun struct {
	n     int
	argv  []string
	pty   bool
	cgo   bool // the binary go build makes with cgo (go install's), not the static one
	ctrlC bool // the first signal is typed (^C on the pty), not sent with kill
	delay time.Duration
	// fromCatch counts delay from the moment capwrap catches signals
	// (package sigcatch's init, seen in GODEBUG=inittrace=1's report on
	// stderr) instead of from the spawn: on a busy machine most of the
	// first 50 ms go by before the catch, and the moments after it are
	// the ones where capwrap has something to get wrong.
	fromCatch bool
	// fromCommand counts delay from the moment capwrap's command runs (a
	// child of capwrap named like it is seen in /proc): the moments of
	// forwarding, job control and the end.
	fromCommand bool
	unsent      bool // the first signal found capwrap ended already
	sig         syscall.Signal
	second      syscall.Signal // 0: none
	gap         time.Duration  // before the second signal
	status      syscall.WaitStatus
	took        time.Duration
	out, err    []byte // stdout and stderr (a pty run: both in out)
	receipt     map[string]any
	madeDir     bool
}

func (r *stressRun) String() string {
	how := "pipes"
	if r.pty {
		how = "a pty"
	}
	first := unixName(r.sig)
	if r.ctrlC {
		first = "^C"
	}
	from := "the spawn"
	switch {
	case r.fromCatch:
		from = "the catch"
	case r.fromCommand:
		from = "the command's start"
	}
	bin := "static"
	if r.cgo {
		bin = "cgo"
	}
	s := fmt.Sprintf("run %d: %q (%s binary) on %s, %s %v after %s", r.n, r.argv, bin, how, first, r.delay.Round(time.Microsecond), from)
	if r.second != 0 {
		s += fmt.Sprintf(", %s %v later", unixName(r.second), r.gap.Round(time.Microsecond))
	}
	return s
}

func unixName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// TestStartupSignalStress (issue 26): capwrap on `true` and `sleep 1`,
// stdout and stderr on pipes (a harness) or on a pty it has as its
// controlling terminal (a person's terminal, where Ctrl-C is typed), gets
// SIGINT, SIGTERM or SIGHUP 0–50 ms after its spawn, sometimes a second
// one shortly after. Every run must end without a runtime crash (nothing
// of the runtime's on stderr, no death by a fault signal, no exit status 2),
// with a receipt (--receipt-file; on pipes also the capwrap-receipt line),
// unless the signal came before capwrap could catch anything (it died of
// it and made nothing: no tool-outputs directory), with its command gone
// when capwrap has gone, and no `sleep 1` may run to its end (a signal
// lost). What capwrap started must all be gone at the end.
func TestStartupSignalStress(t *testing.T) {
	if testing.Short() {
		t.Skip("builds capwrap; runs for a minute")
	}
	begun := time.Now()
	bin, cgoBin := termCapwrap(t), cgoCapwrap(t)
	if cgoBin == "" {
		t.Log("no C compiler: the static binary only")
	}
	runs, timed := stressMinRuns, true
	if *stressRuns < 0 {
		t.Fatalf("-stress.runs %d: want a positive count", *stressRuns)
	}
	if *stressRuns > 0 {
		runs, timed = *stressRuns, false
	}
	seed := uint64(time.Now().UnixNano())
	if *stressSeed != 0 {
		seed = *stressSeed
	}
	t.Logf("seed %d (-stress.seed replays it)", seed)
	base := t.TempDir()
	tag := "CAPWRAP_TEST_RUN=" + t.Name()

	var (
		next                                        atomic.Int64
		mu                                          sync.Mutex
		done, crashes, missing, early, left, lost   int
		ptys, receipts, cancelled, secondSignalRuns int
		fromCatch, fromCommand, cgoRuns, unsent     int
		failures                                    []string
	)
	fail := func(r *stressRun, format string, args ...any) {
		msg := r.String() + ": " + fmt.Sprintf(format, args...)
		if len(failures) < 20 {
			failures = append(failures, msg)
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	for w := range stressWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for {
				n := int(next.Add(1)) - 1
				if n >= runs && (!timed || time.Since(begun) >= stressBudget) {
					return
				}
				r := planStressRun(n, rng, cgoBin != "")
				dir := filepath.Join(base, strconv.Itoa(n))
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Error(err)
					return
				}
				b := bin
				if r.cgo {
					b = cgoBin
				}
				err := r.run(b, dir, tag)
				alive := r.commandAlive(tag)
				os.RemoveAll(dir)
				mu.Lock()
				done++
				if r.pty {
					ptys++
				}
				if r.second != 0 {
					secondSignalRuns++
				}
				if r.cgo {
					cgoRuns++
				}
				if r.fromCatch {
					fromCatch++
				}
				if r.fromCommand {
					fromCommand++
				}
				if err != nil {
					crashes++ // counted as the worst: it must be looked at
					fail(r, "%v", err)
				}
				if c := r.crash(); c != "" {
					crashes++
					fail(r, "runtime crash: %s\nstdout:\n%s\nstderr:\n%s", c, r.out, r.err)
				}
				switch {
				case r.receipt != nil:
					receipts++
					if p, _ := r.receipt["process"].(map[string]any); p["state"] == "cancelled" {
						cancelled++
					}
				case r.status.Signaled() && !r.madeDir && !r.fromCatch && !r.fromCommand:
					early++ // killed before it could catch the signal
				default:
					missing++
					fail(r, "no receipt (status %v, tool-outputs made: %v)\nstdout:\n%s\nstderr:\n%s", r.status, r.madeDir, r.out, r.err)
				}
				if alive {
					left++
					fail(r, "the command %v still ran when capwrap had ended", r.receipt["process"])
				}
				if r.unsent {
					unsent++
				}
				if r.argv[0] == "sleep" && !r.unsent && r.status.Exited() && r.status.ExitStatus() == 0 && r.took >= time.Second {
					lost++
					fail(r, "the signal was lost: sleep ran its full second (status 0 after %v)\nstdout:\n%s\nstderr:\n%s", r.took, r.out, r.err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// The watchdogs end at their disarm, or --kill-after after their
	// capwrap's death; nothing started for the test may be left.
	if stray := awaitEnd(10*time.Second, func() []int { return testProcs(t.Name()) }); len(stray) > 0 {
		left += len(stray)
		failures = append(failures, fmt.Sprintf("processes %v outlived the runs by 10s", stray))
	}
	t.Logf("%d runs in %v (%d on a pty, %d with a second signal, %d timed from the catch, %d from the command's start, %d of the cgo binary): %d runtime crashes, %d without a receipt, %d signalled before capwrap could catch (no receipt, nothing made), %d receipts (%d cancelled before the command started), %d processes left behind, %d signals lost; %d runs had ended before their first signal",
		done, time.Since(start).Round(time.Second), ptys, secondSignalRuns, fromCatch, fromCommand, cgoRuns, crashes, missing, early, receipts, cancelled, left, lost, unsent)
	for _, f := range failures {
		t.Error(f)
	}
	if receipts == 0 {
		t.Error("no run printed a receipt: signals are never caught")
	}
}

// planStressRun draws run n: the command, pipes or a pty, the signals and
// their moments.
func planStressRun(n int, rng *rand.Rand, withCgo bool) *stressRun {
	sigs := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}
	r := &stressRun{n: n, argv: []string{"true"}, delay: time.Duration(rng.IntN(50_001)) * time.Microsecond,
		sig: sigs[rng.IntN(len(sigs))], pty: rng.IntN(4) == 0}
	if rng.IntN(2) == 0 {
		r.argv = []string{"sleep", "1"}
	}
	if r.pty && rng.IntN(2) == 0 {
		r.ctrlC, r.sig = true, syscall.SIGINT
	}
	switch rng.IntN(3) {
	case 0:
		r.fromCatch = !r.pty
	case 1:
		r.fromCommand = true
	}
	r.cgo = withCgo && rng.IntN(2) == 0
	if rng.IntN(3) == 0 {
		r.second, r.gap = sigs[rng.IntN(len(sigs))], time.Duration(rng.IntN(5_001))*time.Microsecond
	}
	return r
}

// run runs capwrap in dir as the plan says and records how it ended. The
// error is the test's own trouble (a start that failed, a run that did not
// end within stressMaxWait).
func (r *stressRun) run(bin, dir, tag string) error {
	rf := filepath.Join(dir, "receipt.json")
	args := append([]string{"--dir", filepath.Join(dir, "outputs"), "--receipt-file", rf, "--kill-after", "1s", "--"}, r.argv...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	// GOTRACEBACK=crash: a crash of the runtime dumps every goroutine,
	// the runtime's frames too, and ends in SIGABRT (a core where allowed).
	cmd.Env = append(os.Environ(), "CAPWRAP_DIR=", "GOTRACEBACK=crash", tag)
	var out, errOut bytes.Buffer
	var master *os.File
	read := make(chan struct{})
	if r.pty {
		m, s, err := pty.Open()
		if err != nil {
			return err
		}
		master = m
		defer master.Close()
		cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		go func() { defer close(read); io.Copy(&out, master) }() // until EIO: every slave closed
		defer s.Close()
		err = cmd.Start()
		s.Close()
		if err != nil {
			return err
		}
	} else {
		cmd.Stdout, cmd.Stderr = &out, &errOut
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		close(read)
	}
	caught := make(chan struct{})
	if r.fromCatch {
		cmd.Env = append(cmd.Env, "GODEBUG=inittrace=1")
		cmd.Stderr = &watchWriter{w: &errOut, want: []byte("init github.com/capwrap/capwrap/internal/sigcatch @"), seen: caught}
	}
	if !r.pty {
		if err := cmd.Start(); err != nil {
			return err
		}
	}
	began := time.Now()
	ended := make(chan struct{})
	go func() { cmd.Wait(); close(ended) }()
	signal := func(s syscall.Signal, typed bool) {
		if typed {
			master.Write([]byte{3}) // ^C: SIGINT to the terminal's foreground group
			return
		}
		if err := cmd.Process.Signal(s); err != nil && s == r.sig {
			r.unsent = true // capwrap had ended: it was quicker than the delay
		}
	}
	switch {
	case r.fromCatch:
		select {
		case <-caught:
		case <-ended: // it failed before; the checks below say how
		case <-time.After(stressMaxWait):
		}
	case r.fromCommand:
		awaitChild(cmd.Process.Pid, r.argv[0], ended)
	}
	time.Sleep(r.delay)
	signal(r.sig, r.ctrlC)
	if r.second != 0 {
		time.Sleep(r.gap)
		signal(r.second, false)
	}
	select {
	case <-ended:
	case <-time.After(stressMaxWait):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-ended
		return fmt.Errorf("capwrap did not end within %v", stressMaxWait)
	}
	r.took = time.Since(began)
	r.status = cmd.ProcessState.Sys().(syscall.WaitStatus)
	if r.pty {
		select {
		case <-read:
		case <-time.After(stressMaxWait):
			master.Close()
			<-read
			return fmt.Errorf("the pty was still open %v after capwrap ended", stressMaxWait)
		}
	} else {
		<-read
	}
	r.out, r.err = out.Bytes(), dropInitTrace(errOut.Bytes())
	if b, err := os.ReadFile(rf); err == nil {
		if err := json.Unmarshal(b, &r.receipt); err != nil {
			return fmt.Errorf("receipt file: %v\n%s", err, b)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if !r.pty && r.receipt != nil && !bytes.Contains(r.out, []byte("capwrap-receipt {")) {
		return fmt.Errorf("a receipt file but no capwrap-receipt line on stdout:\n%s", r.out)
	}
	_, err := os.Stat(filepath.Join(dir, "outputs"))
	r.madeDir = err == nil
	return nil
}

// crash says how the run shows a crash of capwrap's runtime, "" if not.
func (r *stressRun) crash() string {
	for _, b := range [][]byte{r.out, r.err} {
		for _, s := range crashSigns {
			if i := bytes.Index(b, []byte(s)); i >= 0 {
				return fmt.Sprintf("%q in its output", s)
			}
		}
	}
	switch {
	case r.status.Exited() && r.status.ExitStatus() == 2:
		return "exit status 2"
	case r.status.Signaled():
		switch r.status.Signal() {
		case syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGABRT, syscall.SIGTRAP, syscall.SIGILL, syscall.SIGFPE, syscall.SIGSYS, syscall.SIGQUIT:
			return "death by " + r.status.Signal().String()
		}
	}
	return ""
}

// commandAlive reports whether the command the receipt names still runs
// (not a zombie) now that capwrap has ended: capwrap ends only once its
// command has.
func (r *stressRun) commandAlive(tag string) bool {
	p, _ := r.receipt["process"].(map[string]any)
	pid, ok := p["pid"].(float64)
	if !ok || !alive(int(pid)) {
		return false
	}
	env, _ := os.ReadFile("/proc/" + strconv.Itoa(int(pid)) + "/environ")
	return bytes.Contains(env, []byte(tag+"\x00"))
}

// watchWriter passes what it gets on to w, and closes seen once want has
// come.
type watchWriter struct {
	w    io.Writer
	want []byte
	seen chan struct{}
	got  []byte // what came until want did: the runtime writes a line in pieces
}

func (ww *watchWriter) Write(p []byte) (int, error) {
	if ww.got != nil || len(ww.want) > 0 {
		ww.got = append(ww.got, p...)
		if bytes.Contains(ww.got, ww.want) {
			close(ww.seen)
			ww.want, ww.got = nil, nil
		}
	}
	return ww.w.Write(p)
}

// dropInitTrace removes GODEBUG=inittrace=1's lines ("init PACKAGE @...").
func dropInitTrace(b []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("init ")) {
			out = append(out, line...)
		}
	}
	return out
}

var (
	cgoBinOnce sync.Once
	cgoBin     string
)

// cgoCapwrap builds capwrap as a plain go build or go install does where a
// C compiler is found: with cgo (package net brings runtime/cgo in), whose
// threads and signal stacks the C runtime sets up. "" when there is no C
// compiler or the build fails (the test then runs the static binary only).
func cgoCapwrap(t *testing.T) string {
	t.Helper()
	cgoBinOnce.Do(func() {
		if _, err := exec.LookPath("cc"); err != nil {
			return
		}
		dir := filepath.Dir(termCapwrap(t))
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = "/usr/local/go/bin/go"
		}
		bin := filepath.Join(dir, "capwrap-cgo")
		build := exec.Command(goBin, "build", "-o", bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := build.CombinedOutput(); err != nil {
			t.Logf("go build with cgo: %v\n%s", err, out)
			return
		}
		cgoBin = bin
	})
	return cgoBin
}

// awaitChild waits until process pid has a child named name (its command,
// not its watchdog, which is named capwrap), or ended is closed, polling
// /proc (a quick command may come and go unseen: the run then ends first).
func awaitChild(pid int, name string, ended <-chan struct{}) {
	deadline := time.Now().Add(stressMaxWait)
	for time.Now().Before(deadline) {
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
		for _, task := range tasks {
			b, _ := os.ReadFile(task)
			for _, c := range bytes.Fields(b) {
				if comm, _ := os.ReadFile("/proc/" + string(c) + "/comm"); string(bytes.TrimSpace(comm)) == name {
					return
				}
			}
		}
		select {
		case <-ended:
			return
		case <-time.After(200 * time.Microsecond):
		}
	}
}
