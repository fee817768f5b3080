package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/capwrap/capwrap/receipt"
)

// Space for receipt.json on a full disk (issue 26). A capture whose
// file system fills up is partial, disk_full, and must still say so: a
// capture without receipt.json reads as abandoned. So Create writes
// spaceBytes into receipt.space, blocks the file system allocates then,
// while there is room; Publish, when it cannot write receipt.json because
// the disk is full, writes the receipt over those blocks instead (no new
// block is needed on ext4, XFS, tmpfs or APFS: the writes land in place),
// cuts the file to the receipt's length, fsyncs it and renames it to
// receipt.json, as atomic as the usual path. Otherwise the file is
// removed at Publish or Discard. Like the receipts it is not charged to
// the directory quota. On a copy-on-write file system with snapshots an
// overwrite may still need a block; the capture then reads as abandoned,
// as before.

// spaceBytes is the size of receipt.space: four times a receipt with a
// long command, the pretty receipt being about 2 KiB.
const spaceBytes = 16 << 10

// spaceFill is what receipt.space holds until it is used: text saying
// what it is, so that a grep over the directory finds nothing strange.
var spaceFill = []byte("capwrap: space set aside for receipt.json should the disk fill up\n")

// spaceBlock is what makeSpace writes: spaceBytes of spaceFill lines,
// made at first use (not in the package's init: issue 28).
var spaceBlock = sync.OnceValue(func() []byte { return bytes.Repeat(spaceFill, spaceBytes/len(spaceFill)+1)[:spaceBytes] })

// writeSpace writes spaceBlock into f: blocks allocated, not a hole.
func writeSpace(f *os.File) error {
	_, err := f.WriteAt(spaceBlock(), 0)
	return err
}

// makeSpace creates receipt.space in the capture directory root,
// exclusively and 0600, with spaceBytes bytes written (blocks allocated;
// fallocate measured slower on ext4, create and discard together). nil
// when it cannot be made: the disk may be full already, and the capture
// goes on without it.
func makeSpace(root *os.Root) *os.File {
	f, err := root.OpenFile(spaceName, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		root.Remove(spaceName)
		return nil
	}
	if err := writeSpace(f); err != nil {
		f.Close()
		root.Remove(spaceName)
		return nil
	}
	return f
}

// publishInSpace writes r as receipt.json through receipt.space: the
// pretty receipt when it fits, else the compact one, else the compact one
// without its command (the live receipt, which stays, has it). Caller
// holds c.receiptMu; c.space is not nil.
func (c *Capture) publishInSpace(r *receipt.Receipt) error {
	b, err := fitReceipt(r, spaceBytes)
	if err != nil {
		return err
	}
	f := c.space
	if _, err := f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("write the receipt into %s: %w", spaceName, UnwrapPath(err))
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		return fmt.Errorf("truncate %s: %w", spaceName, UnwrapPath(err))
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", spaceName, UnwrapPath(err))
	}
	if err := renameNoReplace(c.root, c.dirf, spaceName, receiptName); err != nil {
		return err
	}
	f.Close()
	c.space = nil
	return nil
}

// fitReceipt is r marshalled in at most max bytes: pretty, else compact,
// else compact without the command.
func fitReceipt(r *receipt.Receipt, max int) ([]byte, error) {
	b, err := r.MarshalPretty()
	if err != nil || len(b) <= max {
		return b, err
	}
	if b, err = json.Marshal(r); err != nil || len(b) <= max {
		return b, err
	}
	short := *r
	short.Command = nil
	if b, err = json.Marshal(&short); err != nil || len(b) <= max {
		return b, err
	}
	return nil, errors.New("the receipt does not fit the space set aside for it")
}

// dropSpace removes receipt.space once it is not needed. Caller holds
// c.receiptMu, or owns c alone.
func (c *Capture) dropSpace() {
	if c.space == nil {
		return
	}
	c.space.Close()
	c.space = nil
	c.root.Remove(spaceName)
}
