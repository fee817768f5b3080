package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// Entry describes one capture for `capwrap list` and `capwrap show`
// (SPEC §8).
type Entry struct {
	// ID is the capture ID, which is also its directory name.
	ID string
	// Running is true while the capture's writer holds its lock.
	Running bool
	// Abandoned is true when the capture is not running and has no
	// receipt.json: its writer died; it reads as "partial (abandoned)".
	Abandoned bool
	// Final is true when receipt.json exists.
	Final bool
	// Receipt is receipt.json when Final, else receipt.live.json; nil when
	// neither could be read (ReceiptErr says why).
	Receipt    *Receipt
	ReceiptErr error
	// Stdout and Stderr are the current stream files.
	Stdout, Stderr FileEntry
}

// FileEntry is a stream file as found on disk.
type FileEntry struct {
	// Path is relative like Dir.Path; "" when neither the .log nor the
	// .live file exists.
	Path string
	// Name is the file's name inside the capture directory.
	Name string
	// Size is its current size in bytes.
	Size int64
	// Live is true for a .live file (still growing, or abandoned).
	Live bool
}

// List returns the captures in the directory, newest first (SPEC §8).
// Names that are not capture IDs are ignored. An unreadable receipt is
// reported in the Entry, not as an error; the error is for the directory
// itself.
func (d *Dir) List() ([]Entry, error) {
	ids, err := d.ids()
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, len(ids))
	for _, id := range ids {
		e, err := d.Entry(id)
		if err != nil {
			continue // vanished (pruned) meanwhile
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// Entry describes the capture id (a full ID, see Lookup); the error is
// fs.ErrNotExist when there is no such capture.
func (d *Dir) Entry(id string) (Entry, error) {
	if !ValidID(id) {
		return Entry{}, fmt.Errorf("%q: %w", id, ErrBadID)
	}
	running, err := d.probeRunning(id)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{ID: id, Running: running}
	e.Stdout = d.fileEntry(id, Stdout)
	e.Stderr = d.fileEntry(id, Stderr)
	b, err := d.root.ReadFile(id + "/" + receiptName)
	if err == nil {
		e.Final = true
	} else if errors.Is(err, fs.ErrNotExist) {
		b, err = d.root.ReadFile(id + "/" + liveReceiptName)
	}
	if err == nil {
		var r Receipt
		if err = json.Unmarshal(b, &r); err == nil {
			e.Receipt = &r
		}
	}
	e.ReceiptErr = err
	e.Abandoned = !e.Running && !e.Final
	return e, nil
}

func (d *Dir) fileEntry(id, stream string) FileEntry {
	fi, name := d.streamFile(id, stream)
	if fi == nil {
		return FileEntry{}
	}
	return FileEntry{Path: filepath.Join(d.path, id, name), Name: name, Size: fi.Size(), Live: name == stream+liveSuffix}
}

// ids returns the capture IDs in the directory, newest first.
func (d *Dir) ids() ([]string, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, de := range des {
		if de.IsDir() && ValidID(de.Name()) {
			ids = append(ids, de.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	return ids, nil
}

// Lookup resolves a unique prefix of a capture ID to the full ID (SPEC §8).
// Errors wrap ErrBadID (the prefix contains '/', "..", or cannot start an
// ID), ErrUnknownID or ErrAmbiguousID.
func (d *Dir) Lookup(prefix string) (string, error) {
	if err := checkPrefix(prefix); err != nil {
		return "", err
	}
	ids, err := d.ids()
	if err != nil {
		return "", err
	}
	var found []string
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s: %w", prefix, ErrUnknownID)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%s matches %d captures: %w", prefix, len(found), ErrAmbiguousID)
}
