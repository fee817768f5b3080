//go:build unix

package main

// capwrap's own voice. Every message capwrap itself prints on stderr comes
// from this file and has one of three forms:
//
//	capwrap: error: ...    something stopped capwrap or part of its job
//	capwrap: warning: ...  capwrap carried on, but the user should know
//	capwrap: hint: ...     what to do about the message just before it
//
// Messages are one line, lowercase, with no final period, and name the
// thing they are about (a flag, a path, a variable). They never go to
// stdout, which carries the child's output and the receipt.

import (
	"fmt"
	"io"
	"strings"
)

// diag writes capwrap's diagnostics to one writer, normally os.Stderr.
type diag struct {
	w io.Writer
}

func (d diag) say(kind, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	msg = strings.TrimRight(strings.ReplaceAll(msg, "\n", " "), ". ")
	fmt.Fprintf(d.w, "capwrap: %s: %s\n", kind, msg)
}

// Errorf, Warnf and Hintf say one message of their kind; they also serve
// the run as its runner.Diag.
func (d diag) Errorf(format string, args ...any) { d.say("error", format, args...) }
func (d diag) Warnf(format string, args ...any)  { d.say("warning", format, args...) }
func (d diag) Hintf(format string, args ...any)  { d.say("hint", format, args...) }
