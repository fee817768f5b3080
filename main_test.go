package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/internal/sigcatch"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/wrap"
)

// TestMain registers capwrap and the test helpers as commands that
// testscript scripts (testdata/script/*.txtar) run as real processes.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == wrap.WatchdogArg {
		// The watchdog's helper proper, exec'd by its shell stage as
		// /proc/self/fd/3 (wrap.StartWatchdog), a name testscript does
		// not know: capwrap's main would run it by its first argument.
		os.Exit(wrap.WatchdogMain(os.Stdin, os.Args[2:]))
	}
	// The test binary and its helper commands keep the default actions
	// of signals; the capwrap command catches them again in main.
	sigcatch.Release()
	if filepath.Base(os.Args[0]) != "capwrap" { // the test binary, not its capwrap command
		// The Go tests that run capwrap (a built binary, or this one as
		// the capwrap command) give it this environment: no running
		// notice (--notice-after), which a busy machine could otherwise
		// bring on before the output a test compares. The scripts get it
		// from Setup; running_notice.txtar tests the notice.
		os.Setenv("CAPWRAP_NOTICE_AFTER", "0")
	}
	testscript.Main(cleanupM{m}, map[string]func(){
		"capwrap": main,
		"fixture": func() { os.Exit(fixtureMain(os.Args[1:])) },
		"hangfs":  func() { os.Exit(hangfsMain(os.Args[1:])) },
		// waitfile and poll wait for a condition (waitcmd_test.go).
		// They end with syscall.Exit: under -race, os.Exit would first
		// sleep a second (the race runtime's atexit_sleep_ms), and a
		// script runs them often.
		"waitfile": func() { syscall.Exit(waitfileMain(os.Args[1:])) },
		"poll":     func() { syscall.Exit(pollMain(os.Args[1:])) },
		"sigprobe": func() {
			// sigprobe FILE DURATION [AFTER]: catches SIGINT, creates
			// FILE, then prints "got SIGINT" if one arrives within
			// DURATION, else "no SIGINT". With AFTER, DURATION counts
			// from when file AFTER exists (the script makes it once it
			// has sent its signal), so the window cannot close before
			// the signal was sent, however busy the machine. A catch
			// works whatever it inherited (SIG_IGN).
			c := make(chan os.Signal, 1)
			signal.Notify(c, syscall.SIGINT)
			d, err := time.ParseDuration(os.Args[2])
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			if err := os.WriteFile(os.Args[1], nil, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			if len(os.Args) > 3 {
				for deadline := time.Now().Add(waitPatience); ; {
					if _, err := os.Stat(os.Args[3]); err == nil {
						break
					} else if time.Now().After(deadline) {
						fmt.Fprintf(os.Stderr, "sigprobe: no %s after %v\n", os.Args[3], waitPatience)
						os.Exit(2)
					}
					select {
					case <-c:
						fmt.Println("got SIGINT")
						return
					case <-time.After(waitPoll):
					}
				}
			}
			select {
			case <-c:
				fmt.Println("got SIGINT")
			case <-time.After(d):
				fmt.Println("no SIGINT")
			}
		},
		"bytewise": func() {
			// bytewise TEXT: writes TEXT to stdout one byte per write.
			for _, b := range []byte(os.Args[1]) {
				os.Stdout.Write([]byte{b})
				time.Sleep(2 * time.Millisecond)
			}
		},
	})
}

// cleanupM runs the tests, then removes the binary the terminal tests
// built (testscript.Main exits right after Run).
type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	// The suite may itself run under capwrap (capwrap -- make test): its
	// capwraps must not take themselves for nested ones. (Here, not in
	// TestMain, which also runs for every command testscript starts.)
	os.Unsetenv(runner.EnvNested)
	code := c.m.Run()
	if termBin != "" {
		os.RemoveAll(filepath.Dir(termBin))
	}
	return code
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("CAPWRAP_DIR", "")
			// No running notice (--notice-after) but where a script asks
			// for it (running_notice.txtar): a run that a busy machine
			// slows past 5 s would print it before the output a script
			// compares.
			e.Setenv("CAPWRAP_NOTICE_AFTER", "0")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"rcpt":  cmdRcpt,
			"glob":  cmdGlob,
			"tmpfs": cmdTmpfs,
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// cmdRcpt checks the receipt on the last line of a file that holds
// capwrap's stdout ("stdout" for the last command's). Each argument after
// the file is one assertion:
//
//	path=value       the JSON value at the dotted path, printed compactly
//	                 (strings without quotes; null for null or missing)
//	path~REGEXP      the value, shown as for =, matches REGEXP
//	path<=N          a number no greater than N
//	body<=N          at most N bytes printed before the receipt line
//	committed:STREAM committed_bytes equals the capture file's size
//	file:STREAM=F    the stream's capture file is byte-identical to file F
//	size:STREAM      committed_bytes equals the capture file's size, and lines
//	                 equals its newline count
//
// cmdGlob: "glob PATTERN..." succeeds when every pattern (filepath.Match
// syntax, relative to the work directory) matches a file; "! glob" when none
// does. The builtin exists does not expand patterns.
func cmdGlob(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: glob PATTERN...")
	}
	for _, pat := range args {
		m, err := filepath.Glob(ts.MkAbs(pat))
		ts.Check(err)
		switch {
		case neg && len(m) > 0:
			ts.Fatalf("%s matches %v", pat, m)
		case !neg && len(m) == 0:
			ts.Fatalf("%s matches nothing", pat)
		}
	}
}

func cmdRcpt(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("rcpt does not support !")
	}
	if len(args) < 1 {
		ts.Fatalf("usage: rcpt FILE assertion...")
	}
	b := []byte(ts.ReadFile(args[0]))
	at := bytes.LastIndex(b, []byte("capwrap-receipt {"))
	if at < 0 || (at > 0 && b[at-1] != '\n') || bytes.IndexByte(bytes.TrimRight(b[at:], "\n"), '\n') >= 0 {
		ts.Fatalf("last line is not a receipt")
	}
	var rc map[string]any
	if err := json.Unmarshal(bytes.TrimPrefix(b[at:], []byte("capwrap-receipt ")), &rc); err != nil {
		ts.Fatalf("receipt is not JSON: %v", err)
	}
	rc = completeFooter(rc, ts.MkAbs)
	if err := checkAccounting(rc); err != nil {
		ts.Fatalf("receipt: %v", err)
	}
	failed := false
	for _, a := range args[1:] {
		if err := checkAssertion(rc, b[:at], ts.MkAbs, a); err != nil {
			ts.Logf("%s: %v", a, err)
			failed = true
		}
	}
	if failed {
		ts.Fatalf("receipt assertions failed")
	}
}

// checkAccounting holds a receipt that a test read (a footer, completed
// from receipt.json when there is one, or a whole receipt) to SPEC §7's
// accounting: in a whole receipt (it has "schema") of a run that ended,
// both streams have accounting and representation, and observed =
// accepted + pending + discarded (receipt.Receipt.Check). A footer alone
// carries at most the lost counts: neither negative, nor above what was
// observed. Every test that reads a receipt calls it: cmdRcpt, and
// footer and readReceipt in background_test.go.
func checkAccounting(rc map[string]any) error {
	if _, whole := rc["schema"]; !whole {
		for _, name := range []string{"stdout", "stderr"} {
			observed, _ := lookup(rc, "streams."+name+".observed_bytes").(float64)
			pending, _ := lookup(rc, "streams."+name+".accounting.pending").(float64)
			discarded, _ := lookup(rc, "streams."+name+".accounting.discarded").(float64)
			if pending < 0 || discarded < 0 || pending+discarded > observed {
				return fmt.Errorf("streams.%s: pending %v + discarded %v, observed %v", name, pending, discarded, observed)
			}
		}
		return nil
	}
	b, err := json.Marshal(rc)
	if err != nil {
		return err
	}
	var r receipt.Receipt
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("not a receipt: %v", err)
	}
	if state := lookup(rc, "process.state"); state != nil && state != string(receipt.ProcessRunning) {
		for name, s := range map[string]receipt.Stream{"stdout": r.Streams.Stdout, "stderr": r.Streams.Stderr} {
			if s.Accounting == nil || s.Representation == nil {
				return fmt.Errorf("streams.%s: a final receipt without accounting or representation", name)
			}
		}
	}
	return r.Check()
}

// completeFooter reads the footer's keys as SPEC §7 says a reader should:
// a key the short footer leaves out is receipt.json's (or, for a running
// capture, receipt.live.json's) in the capture the footer names. The
// footer's own values win; a footer naming no capture is taken as it is.
func completeFooter(footer map[string]any, abs func(string) string) map[string]any {
	dir, _ := footer["dir"].(string)
	full := map[string]any{}
	for _, name := range []string{"receipt.json", "receipt.live.json"} {
		if b, err := os.ReadFile(filepath.Join(abs(dir), name)); dir != "" && err == nil {
			json.Unmarshal(b, &full)
			break
		}
	}
	if len(full) == 0 {
		return footer // a compact success or an unkept run: the footer is all there is
	}
	merge(full, footer)
	return full
}

// merge copies src into dst, object by object.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				merge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

func lookup(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func show(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func checkAssertion(rc map[string]any, body []byte, abs func(string) string, a string) error {
	switch {
	case strings.HasPrefix(a, "file:"):
		stream, want, _ := strings.Cut(strings.TrimPrefix(a, "file:"), "=")
		got, err := os.ReadFile(abs(show(lookup(rc, "streams."+stream+".file"))))
		if err != nil {
			return err
		}
		exp, err := os.ReadFile(abs(want))
		if err != nil {
			return err
		}
		if !bytes.Equal(got, exp) {
			return fmt.Errorf("capture file has %d bytes (sha256 %s), want %d bytes (sha256 %s)",
				len(got), sum(got), len(exp), sum(exp))
		}
		if h := lookup(rc, "streams."+stream+".sha256"); h != nil && show(h) != sum(got) {
			return fmt.Errorf("receipt sha256 %v, file %s", h, sum(got))
		}
		return nil
	case strings.HasPrefix(a, "size:"):
		stream := strings.TrimPrefix(a, "size:")
		got, err := os.ReadFile(abs(show(lookup(rc, "streams."+stream+".file"))))
		if err != nil {
			return err
		}
		if c := show(lookup(rc, "streams."+stream+".committed_bytes")); c != strconv.Itoa(len(got)) {
			return fmt.Errorf("committed_bytes %s, file has %d", c, len(got))
		}
		if l := show(lookup(rc, "streams."+stream+".lines")); l != strconv.Itoa(bytes.Count(got, []byte("\n"))) {
			return fmt.Errorf("lines %s, file has %d", l, bytes.Count(got, []byte("\n")))
		}
		return nil
	case strings.HasPrefix(a, "committed:"):
		stream := strings.TrimPrefix(a, "committed:")
		fi, err := os.Stat(abs(show(lookup(rc, "streams."+stream+".file"))))
		if err != nil {
			return err
		}
		if c := show(lookup(rc, "streams."+stream+".committed_bytes")); c != strconv.FormatInt(fi.Size(), 10) {
			return fmt.Errorf("committed_bytes %s, file has %d", c, fi.Size())
		}
		return nil
	case strings.HasPrefix(a, "body<="):
		max, _ := strconv.Atoi(strings.TrimPrefix(a, "body<="))
		if n := len(body); n > max {
			return fmt.Errorf("printed %d bytes before the receipt", n)
		}
		return nil
	case strings.Contains(a, "~"):
		path, re, _ := strings.Cut(a, "~")
		if got := show(lookup(rc, path)); !regexp.MustCompile(re).MatchString(got) {
			return fmt.Errorf("got %s, want a match for %s", got, re)
		}
		return nil
	case strings.Contains(a, "<="):
		path, lim, _ := strings.Cut(a, "<=")
		n, ok := lookup(rc, path).(float64)
		max, err := strconv.ParseFloat(lim, 64)
		if !ok || err != nil || n > max {
			return fmt.Errorf("got %s", show(lookup(rc, path)))
		}
		return nil
	}
	path, want, ok := strings.Cut(a, "=")
	if !ok {
		return fmt.Errorf("not an assertion")
	}
	if got := show(lookup(rc, path)); got != want {
		return fmt.Errorf("got %s", got)
	}
	return nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// fixtureMain writes one of the README's fixtures (issue 2) to stdout, or
// to the file given with -o, and exits with the fixture's status when
// writing to stdout. Fixtures are generated, never committed.
func fixtureMain(args []string) int {
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: fixture NAME [-o FILE]")
		return 2
	}
	f, ok := fixtures[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "no fixture %q\n", args[0])
		return 2
	}
	out, errOut := f.gen()
	if len(args) == 3 && args[1] == "-o" {
		if err := os.WriteFile(args[2], out, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if errOut != nil {
			if err := os.WriteFile(args[2]+".err", errOut, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
		}
		return 0
	}
	// stderr first, then stdout: as a compiler's diagnostics precede its
	// exit, and both pipes must be drained concurrently for this to end.
	os.Stderr.Write(errOut)
	os.Stdout.Write(out)
	return f.status
}

type fixture struct {
	status int
	gen    func() (stdout, stderr []byte)
}

// fixtures are the inputs of issue 2's fixture table.
var fixtures = map[string]fixture{
	"compact": {0, func() ([]byte, []byte) { return []byte("hello world 123456\n"), nil }},
	"pytest": {1, func() ([]byte, []byte) {
		var b bytes.Buffer
		b.WriteString("============================= test session starts ==============================\n")
		b.WriteString("platform linux -- Python 3.11.7, pytest-8.3.3\ncollected 20000 items\n\n")
		for i := 0; i < 20000; i++ {
			res := "PASSED"
			if i == 13777 {
				res = "FAILED"
			}
			fmt.Fprintf(&b, "tests/test_mod%03d.py::test_case_%05d %s%*s[%3d%%]\n", i%250, i, res, 20, "", i*100/20000)
		}
		b.WriteString("=================================== FAILURES ===================================\n")
		b.WriteString("___________________________ test_case_13777 ___________________________\n")
		b.WriteString("    assert compute(13777) == 42\nE   AssertionError: assert 41 == 42\n")
		b.WriteString("=========================== short test summary info ============================\n")
		b.WriteString("FAILED tests/test_mod027.py::test_case_13777 - AssertionError: assert 41 == 42\n")
		b.WriteString("======================= 1 failed, 19999 passed in 41.20s =======================\n")
		return b.Bytes(), nil
	}},
	"json": {0, func() ([]byte, []byte) {
		var b bytes.Buffer
		b.WriteString("[\n")
		for i := 0; i < 10000; i++ {
			sep := ","
			if i == 9999 {
				sep = ""
			}
			fmt.Fprintf(&b, `  {"id": %d, "name": "user-%05d", "email": "user%05d@example.com", "active": %t, "roles": ["reader", "writer"], "created_at": "2026-11-%02dT10:%02d:00Z"}%s`+"\n",
				i, i, i, i%3 != 0, i%28+1, i%60, sep)
		}
		b.WriteString("]\n")
		return b.Bytes(), nil
	}},
	"compiler": {2, func() ([]byte, []byte) {
		var e bytes.Buffer
		for i := 0; i < 3000; i++ {
			fmt.Fprintf(&e, "src/module_%02d/file_%03d.c:%d:%d: warning: unused variable 'tmp_%d' [-Wunused-variable]\n   %d |     int tmp_%d = compute();\n      |         ^~~~~\n",
				i%40, i%300, i%900+10, i%30+5, i, i%900+10, i)
		}
		e.WriteString("src/main.c:42:13: error: 'undeclared_symbol' undeclared (first use in this function)\n")
		e.WriteString("make: *** [Makefile:12: build/main.o] Error 1\n")
		return []byte("cc -O2 -Wall -c src/main.c -o build/main.o\n"), e.Bytes()
	}},
	"csv": {0, func() ([]byte, []byte) {
		var b bytes.Buffer
		b.WriteString("id,date,region,product,units,unit_price,total\n")
		for i := 1; i <= 30000; i++ {
			fmt.Fprintf(&b, "%d,2026-%02d-%02d,%s,SKU-%05d,%d,%d.%02d,%d.%02d\n", i, i%12+1, i%28+1,
				[]string{"north", "south", "east", "west"}[i%4], i*7%99991, i%50+1, i%90+9, i%100, (i%50+1)*(i%90+9), i%100)
		}
		return b.Bytes(), nil
	}},
	"longline": {0, func() ([]byte, []byte) {
		return bytes.Repeat([]byte("0123456789abcdef"), 2<<20/16), nil
	}},
	"markers": {2, func() ([]byte, []byte) {
		// 2,340,024 characters: BEGIN-MARKER, lines of text, END-MARKER.
		var b bytes.Buffer
		b.WriteString("BEGIN-MARKER\n")
		line := strings.Repeat("y", 99) + "\n"
		for b.Len() < 2340024-len("END-MARKER\n") {
			b.WriteString(line)
		}
		b.Truncate(2340024 - len("END-MARKER\n"))
		b.WriteString("END-MARKER\n")
		return b.Bytes(), nil
	}},
}

// TestFixtureSizes pins every fixture's sizes and status, so the README's
// fixture table stays true; a fixture missing from the table fails too.
func TestFixtureSizes(t *testing.T) {
	want := map[string]struct {
		stdout, stderr, status int
	}{
		"compact":  {19, 0, 0},
		"pytest":   {1420612, 0, 1},
		"json":     {1572227, 0, 0},
		"compiler": {43, 446691, 2},
		"csv":      {1452599, 0, 0},
		"longline": {2 << 20, 0, 0},
		"markers":  {2340024, 0, 2},
	}
	for name, f := range fixtures {
		out, errOut := f.gen()
		w, ok := want[name]
		switch {
		case !ok:
			t.Errorf("fixture %s has no size in this table (nor in the README's)", name)
		case len(out) != w.stdout || len(errOut) != w.stderr || f.status != w.status:
			t.Errorf("fixture %s: stdout %d bytes, stderr %d bytes, exit %d; want %d, %d, %d",
				name, len(out), len(errOut), f.status, w.stdout, w.stderr, w.status)
		}
	}
	if len(want) != len(fixtures) {
		t.Errorf("the table has %d fixtures, the code %d", len(want), len(fixtures))
	}
	if out, _ := fixtures["longline"].gen(); bytes.IndexByte(out, '\n') >= 0 {
		t.Errorf("longline fixture has a newline")
	}
}

// TestSizeParsing covers the size syntax of SPEC §4 Limits.
func TestSizeParsing(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"123", 123, true}, {"64K", 64 << 10, true}, {"32M", 32 << 20, true},
		{"1G", 1 << 30, true}, {"8MiB", 8 << 20, true}, {"2KiB", 2 << 10, true}, {"3GiB", 3 << 30, true},
		{"10B", 10, true}, {"1kb", 1 << 10, true}, {"-1", 0, false}, {"1.5M", 0, false}, {"M", 0, false},
		{"", 0, false}, {"12X", 0, false},
		{"4096T", 1 << 52, true}, {"4097T", 0, false}, {"4503599627370497", 0, false},
		{"9223372036854775807", 0, false}, {"99999999999999999999", 0, false}, {"-99999999999999999999", 0, false},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestEnvNames: every flag but help and version maps to CAPWRAP_<NAME>.
func TestEnvNames(t *testing.T) {
	if got := envName("dir-quota"); got != "CAPWRAP_DIR_QUOTA" {
		t.Fatal(got)
	}
	var o options
	fs := newFlagSet(&o)
	env := map[string]string{"CAPWRAP_KEEP": "always", "CAPWRAP_DIR_QUOTA": "1M", "CAPWRAP_TIMEOUT": "3s"}
	if err := fs.Parse([]string{"--timeout", "9s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := applyEnv(fs, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if o.keep != "always" || o.dirQuota != 1<<20 || o.timeout != 9*time.Second {
		t.Fatalf("keep %s quota %d timeout %v: a flag must beat its variable, a variable fill an unset flag", o.keep, o.dirQuota, o.timeout)
	}
	env = map[string]string{"CAPWRAP_DIR_QUOTA": "lots"}
	fs = newFlagSet(&options{})
	_ = fs.Parse(nil)
	if _, err := applyEnv(fs, func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "CAPWRAP_DIR_QUOTA") {
		t.Fatalf("bad variable: %v", err)
	}
}

// cmdTmpfs: "tmpfs DIR SIZE" mounts a tmpfs of SIZE (mount's -o size=)
// on DIR, made if missing, and unmounts it when the script ends, failed
// or not: a full disk for scripts that run as root ([root]).
func cmdTmpfs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tmpfs DIR SIZE")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o700))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+args[1], "tmpfs", dir).CombinedOutput(); err != nil {
		ts.Fatalf("mount a tmpfs on %s: %v %s", dir, err, out)
	}
	ts.Defer(func() { exec.Command("umount", "-l", dir).Run() })
}

// TestNotRunArgs checks sigcatch.NotRunArgs, the first arguments with which
// sigcatch's init catches nothing, against the command line: every verb
// and --help, -h, --version are there (their round trips are not paid),
// and nothing else is (a run must be caught from its first moment).
func TestNotRunArgs(t *testing.T) {
	want := map[string]bool{"--help": true, "-h": true, "--version": true}
	for _, v := range verbs {
		want[v] = true
	}
	got := map[string]bool{}
	for _, a := range sigcatch.NotRunArgs {
		got[a] = true
		if !want[a] {
			t.Errorf("sigcatch.NotRunArgs has %q, which can start a run", a)
		}
	}
	for a := range want {
		if !got[a] {
			t.Errorf("sigcatch.NotRunArgs lacks %q", a)
		}
	}
}

// TestWatchdogArgSame: the helper that sigcatch's init leaves alone is the
// one wrap starts (sigcatch imports none of capwrap's packages, so it
// keeps a copy of the name).
func TestWatchdogArgSame(t *testing.T) {
	if sigcatch.WatchdogArg != wrap.WatchdogArg {
		t.Fatalf("sigcatch.WatchdogArg %q, wrap.WatchdogArg %q", sigcatch.WatchdogArg, wrap.WatchdogArg)
	}
}
