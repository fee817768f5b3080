//go:build unix

package main

// How a verb or a run ends, and capwrap's exit status for it, in one place
// (SPEC §3, §8, §10). A verb returns an error and prints none of its own;
// exitStatus says it in capwrap's voice (diag.go), its hint after it, and
// picks the status from the error's type:
//
//	usageError  2    a verb's bad flags or arguments, an unknown or
//	                 ambiguous ID, no tool-outputs directory (SPEC §8)
//	failure     1    a verb could not do its job: an I/O error, a running
//	                 capture
//	refusal     125  capwrap would not run the command: bad flags or
//	                 variables, no command (SPEC §3)
//	outcome     N    a status with nothing left to say, mostly decided and
//	                 said below package main: a command's own (a run, wait;
//	                 its signal re-raised), a launch's, a hand-back's
//	                 (job.ExitHandedBack, 75, SPEC §10), a job verb's
//	                 failure; read --until that matched nothing (1, as grep)
//
// errors.Join of several says each and exits with the highest status.

import (
	"strconv"
	"syscall"

	"github.com/capwrap/capwrap/internal/runner"
)

// Exit statuses of capwrap's own errors.
const (
	exitFailure = 1                // failure
	exitUsage   = 2                // usageError: a verb's (SPEC §8)
	exitRefused = runner.ExitUsage // refusal: 125, capwrap could not start (SPEC §3)
)

// usageError is a verb used wrongly; hint, when not empty, says how to use
// it.
type usageError struct{ msg, hint string }

// failure is a verb that could not do its job.
type failure struct{ msg, hint string }

// refusal is a run that capwrap would not start: its command is not run.
type refusal struct{ msg, hint string }

func (e usageError) Error() string { return e.msg }
func (e failure) Error() string    { return e.msg }
func (e refusal) Error() string    { return e.msg }

// outcome is an exit status with nothing left to say (see the table
// above); exitWith makes one.
type outcome struct {
	status int
	sig    syscall.Signal
}

func (o outcome) Error() string {
	if o.sig != 0 {
		return "exit status " + strconv.Itoa(o.status) + ", " + o.sig.String()
	}
	return "exit status " + strconv.Itoa(o.status)
}

// exitWith is the error for exit status status and signal sig to re-raise:
// nil for 0 and no signal.
func exitWith(status int, sig syscall.Signal) error {
	if status == 0 && sig == 0 {
		return nil
	}
	return outcome{status, sig}
}

// exitStatus says err through d (an error line, then its hint) and returns
// capwrap's exit status for it and the signal to re-raise (0: none).
func exitStatus(err error, d diag) (int, syscall.Signal) {
	say := func(msg, hint string) {
		d.Errorf("%s", msg)
		if hint != "" {
			d.Hintf("%s", hint)
		}
	}
	switch err := err.(type) {
	case nil:
		return 0, 0
	case outcome:
		return err.status, err.sig
	case usageError:
		say(err.msg, err.hint)
		return exitUsage, 0
	case failure:
		say(err.msg, err.hint)
		return exitFailure, 0
	case refusal:
		say(err.msg, err.hint)
		return exitRefused, 0
	case interface{ Unwrap() []error }:
		status := 0
		for _, e := range err.Unwrap() {
			s, _ := exitStatus(e, d)
			status = max(status, s)
		}
		return status, 0
	}
	say(err.Error(), "")
	return exitFailure, 0
}
