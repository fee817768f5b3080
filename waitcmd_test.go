package main

// Helper commands that wait for a condition, never for a time: the test
// scripts (testdata/script/*.txtar) run them with exec, and any shell
// command of a test finds them on PATH too (testscript.Main puts them
// there for the whole test binary). Their deadline is generous: it only
// bounds how long a test that already failed takes to say so.

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"
)

// waitPatience is the default deadline of waitfile and poll.
const waitPatience = 60 * time.Second

// waitPoll is how often waitfile and poll look again.
const waitPoll = 10 * time.Millisecond

// waitfileMain is the helper "waitfile [-t TIMEOUT] PATTERN [REGEXP]": it
// waits until a file matches PATTERN (filepath.Match syntax, relative to
// the working directory) and, with REGEXP, until the content of one that
// does matches REGEXP (in multi-line mode: ^ and $ match at each line's
// start and end). It exits 0 then, or 1 after TIMEOUT (default 60s),
// saying what it last saw.
func waitfileMain(args []string) int {
	fl := flag.NewFlagSet("waitfile", flag.ContinueOnError)
	timeout := fl.Duration("t", waitPatience, "how long to wait at most")
	if err := fl.Parse(args); err != nil || fl.NArg() < 1 || fl.NArg() > 2 {
		fmt.Fprintln(os.Stderr, "usage: waitfile [-t TIMEOUT] PATTERN [REGEXP]")
		return 2
	}
	pattern := fl.Arg(0)
	var re *regexp.Regexp
	if fl.NArg() == 2 {
		var err error
		if re, err = regexp.Compile("(?m)" + fl.Arg(1)); err != nil {
			fmt.Fprintln(os.Stderr, "waitfile:", err)
			return 2
		}
	}
	deadline := time.Now().Add(*timeout)
	last := "no file matches"
	for {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			fmt.Fprintln(os.Stderr, "waitfile:", err)
			return 2
		}
		for _, m := range matches {
			if re == nil {
				return 0
			}
			b, err := os.ReadFile(m)
			if err == nil && re.Match(b) {
				return 0
			}
			if len(b) > 200 {
				b = append(b[:200:200], "..."...)
			}
			last = fmt.Sprintf("%s holds %q", m, b)
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "waitfile: %s %q: still waiting after %v: %s\n", pattern, fl.Arg(1), *timeout, last)
			return 1
		}
		time.Sleep(waitPoll)
	}
}

// pollMain is the helper "poll [-t TIMEOUT] COMMAND [ARG...]": it runs
// COMMAND until it exits 0, and exits 0 then, or 1 after TIMEOUT (default
// 60s) with the last run's output.
func pollMain(args []string) int {
	fl := flag.NewFlagSet("poll", flag.ContinueOnError)
	timeout := fl.Duration("t", waitPatience, "how long to wait at most")
	if err := fl.Parse(args); err != nil || fl.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: poll [-t TIMEOUT] COMMAND [ARG...]")
		return 2
	}
	deadline := time.Now().Add(*timeout)
	for {
		out, err := exec.Command(fl.Arg(0), fl.Args()[1:]...).CombinedOutput()
		if err == nil {
			return 0
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fmt.Fprintln(os.Stderr, "poll:", err)
			return 2
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "poll: %q did not succeed within %v; its last run: %v\n%s", fl.Args(), *timeout, err, out)
			return 1
		}
		time.Sleep(waitPoll)
	}
}
