//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
)

// showOptions are the flags of `capwrap show`: none of its own.
type showOptions struct{}

func (o *showOptions) addFlags(*pflag.FlagSet) {}

func newShowCommand() command {
	var o showOptions
	return command{nargs: 1, addFlags: o.addFlags,
		run: func(e *env, args []string) error { return runShow(e, o, args) }}
}

// runShow is `capwrap show ID` (SPEC §8): receipt.json as written; for a
// running capture the live receipt with the sizes committed so far; for an
// abandoned one the live receipt marked partial (abandoned), or partial
// (killed_with_capwrap) when capwrap's watchdog ended the command, its
// process state unknown.
func runShow(e *env, _ showOptions, args []string) error {
	dir, c, err := openCapture(e, args[0])
	if err != nil {
		return err
	}
	defer dir.Close()
	if c.Final {
		b, err := dir.ReadReceipt(c.ID, false)
		if err != nil {
			return failure{msg: fmt.Sprintf("cannot read %s/%s/receipt.json: %v", dir.Path(), c.ID, store.UnwrapPath(err))}
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b, '\n')
		}
		e.stdout.Write(b)
		return nil
	}
	b, err := liveReceipt(e, dir, c).MarshalPretty()
	if err != nil {
		return failure{msg: err.Error()}
	}
	e.stdout.Write(b)
	return nil
}

// liveReceipt is the receipt show prints for capture c, not final: the
// live one, with what became of an abandoned capture, after a word on
// stderr.
func liveReceipt(e *env, dir *store.Dir, c store.Entry) *receipt.Receipt {
	if c.Receipt == nil && c.ReceiptErr != nil && !errors.Is(c.ReceiptErr, os.ErrNotExist) {
		e.d.Warnf("cannot read %s/%s/receipt.live.json: %v", dir.Path(), c.ID, store.UnwrapPath(c.ReceiptErr))
	}
	rc := c.LiveReceipt(dir.Path() + "/" + c.ID) // none yet: the child is being started
	if !c.Abandoned {
		e.d.Hintf("capture %s is still running: the live receipt, with the bytes committed so far", c.ID)
		return rc
	}
	// The live receipt said running when capwrap wrote it; nobody is left
	// to know what became of the process since (the watchdog, when it
	// ended the command, knows which signals it sent, not how the
	// command ended).
	rc.Capture = c.CaptureStatus()
	rc.Process.State, rc.Process.ExitCode, rc.Process.Signal = "", nil, nil // null: unknown
	if c.KilledWithCapwrap {
		rc.Process.Reason = new("killed with capwrap: capwrap was killed while the command ran, and the command's process group ended with it (SIGTERM from its watchdog, or on Linux from the kernel, and SIGKILL --kill-after later); how the command ended is unknown")
		e.d.Warnf("%s", killedWithCapwrapText(c.ID))
		return rc
	}
	if rc.Process.Reason == nil {
		rc.Process.Reason = new("unknown: capwrap ended without writing the receipt")
	}
	e.d.Warnf("capture %s was abandoned: capwrap ended without a receipt; its files hold the bytes committed", c.ID)
	return rc
}

// killedWithCapwrapText is what show and read say of capture id, whose
// capwrap was killed while the command ran and whose watchdog saw to it
// that the command ended too (SPEC §3; store.Entry.KilledWithCapwrap): it
// does not run on, and what it printed before is in the files.
func killedWithCapwrapText(id string) string {
	return fmt.Sprintf("capture %s ended with capwrap: capwrap was killed while the command ran, and the command with it; the files hold what was committed", id)
}
