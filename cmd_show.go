//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"time"

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
	b, err := liveReceipt(e, dir, c, time.Now()).MarshalPretty()
	if err != nil {
		return failure{msg: err.Error()}
	}
	e.stdout.Write(b)
	return nil
}

// liveReceipt is the receipt show prints for capture c, not final, at
// time now: as list presents it (store.Dir.Presented: the live one, with
// what became of an abandoned capture), after a word on stderr.
func liveReceipt(e *env, dir *store.Dir, c store.Entry, now time.Time) *receipt.Receipt {
	if c.Receipt == nil && c.ReceiptErr != nil && !errors.Is(c.ReceiptErr, os.ErrNotExist) {
		e.d.Warnf("cannot read %s/%s/receipt.live.json: %v", dir.Path(), c.ID, store.UnwrapPath(c.ReceiptErr))
	}
	switch {
	case !c.Abandoned:
		e.d.Hintf("capture %s is still running: the live receipt, with the bytes committed so far", c.ID)
	case c.KilledWithCapwrap:
		e.d.Warnf("%s", killedWithCapwrapText(c.ID))
	default:
		e.d.Warnf("capture %s was abandoned: capwrap ended without a receipt; its files hold the bytes committed", c.ID)
	}
	return dir.Presented(c, now)
}

// killedWithCapwrapText is what show and read say of capture id, whose
// capwrap was killed while the command ran and whose watchdog saw to it
// that the command ended too (SPEC §3; store.Entry.KilledWithCapwrap): it
// does not run on, and what it printed before is in the files.
func killedWithCapwrapText(id string) string {
	return fmt.Sprintf("capture %s ended with capwrap: capwrap was killed while the command ran, and the command with it; the files hold what was committed", id)
}
