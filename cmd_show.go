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
// abandoned one the live receipt marked partial (abandoned), its process
// state unknown.
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
	// to know what became of the process since.
	rc.Capture = receipt.Capture{State: receipt.CapturePartial, Reason: new(receipt.ReasonAbandoned)}
	rc.Process.State, rc.Process.ExitCode, rc.Process.Signal = "", nil, nil // null: unknown
	if rc.Process.Reason == nil {
		rc.Process.Reason = new("unknown: capwrap ended without writing the receipt")
	}
	e.d.Warnf("capture %s was abandoned: capwrap ended without a receipt; its files hold the bytes committed", c.ID)
	return rc
}
