package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/capwrap/capwrap/receipt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
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
	// KilledWithCapwrap is true for an abandoned capture whose directory
	// holds the watchdog's note ([KilledNote]): capwrap was killed while
	// the command ran, and its watchdog ended the command. It reads as
	// "partial (killed_with_capwrap)".
	KilledWithCapwrap bool
	// Final is true when receipt.json exists.
	Final bool
	// Receipt is receipt.json when Final, else receipt.live.json; nil when
	// neither could be read (ReceiptErr says why).
	Receipt    *receipt.Receipt
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

// CaptureStatus is the capture state of e as `capwrap list` and `capwrap
// show` say it: the final receipt's capture state and reason once
// receipt.json exists (even in the instant before its writer lets go of
// the lock), or unknown when it could not be read; else running; else
// partial with reason killed_with_capwrap or abandoned.
func (e Entry) CaptureStatus() receipt.Capture {
	switch {
	case e.Final && e.Receipt == nil:
		return receipt.Capture{State: receipt.CaptureUnknown}
	case e.Final:
		return receipt.Capture{State: e.Receipt.Capture.State, Reason: e.Receipt.Capture.Reason}
	case e.Running:
		return receipt.Capture{State: receipt.CaptureRunning}
	case e.Abandoned && e.KilledWithCapwrap:
		return receipt.Capture{State: receipt.CapturePartial, Reason: new(receipt.ReasonKilledWithCapwrap)}
	case e.Abandoned:
		return receipt.Capture{State: receipt.CapturePartial, Reason: new(receipt.ReasonAbandoned)}
	case e.Receipt == nil:
		return receipt.Capture{State: receipt.CaptureUnknown}
	}
	return receipt.Capture{State: e.Receipt.Capture.State, Reason: e.Receipt.Capture.Reason}
}

// LiveReceipt is the receipt of a capture that has none final yet (a
// running or abandoned one, SPEC §8 `capwrap show`): its live receipt, or
// when there is none yet a running, pending one naming the capture (dir is
// the capture's directory as given to the user, "" when unknown), with
// each stream's bytes committed so far and its file. The result is e's own
// receipt, changed.
func (e Entry) LiveReceipt(dir string) *receipt.Receipt {
	rc := e.Receipt
	if rc == nil {
		rc = &receipt.Receipt{Schema: receipt.Schema, ID: new(e.ID),
			Process: receipt.Process{State: receipt.ProcessRunning}, Capture: receipt.Capture{State: receipt.CapturePending}}
		if dir != "" {
			rc.Dir = new(dir)
		}
	}
	for _, s := range []struct {
		f  FileEntry
		st *receipt.Stream
	}{{e.Stdout, &rc.Streams.Stdout}, {e.Stderr, &rc.Streams.Stderr}} {
		if s.f.Name != "" {
			s.st.CommittedBytes, s.st.File = new(s.f.Size), new(s.f.Path)
		}
	}
	return rc
}

// ProcessStatus is the process state of e with its exit code or signal
// name (nil when none): running; the receipt's ("exited" and 3,
// "signaled" and "SIGKILL", "timeout" and "SIGTERM"...); or unknown for an
// abandoned capture, whose writer died before it learnt the outcome (also
// when the watchdog ended the command: nobody saw how it ended), or an
// unreadable receipt.
func (e Entry) ProcessStatus() (state receipt.ProcessState, code *int, signal *string) {
	switch {
	case e.Final && e.Receipt != nil:
	case e.Running && !e.Final:
		return receipt.ProcessRunning, nil, nil
	default: // abandoned, or an unreadable receipt
		return receipt.ProcessUnknown, nil, nil
	}
	p := e.Receipt.Process
	return p.State, p.ExitCode, p.Signal
}

// StartedAt is when capture e started: its receipt's started_at (final or
// live), to the nanosecond, when it has a readable one; else the time in
// its ID, UTC, to the second (a capture in its first 25 ms has no receipt
// yet). It is the zero time when neither says.
func (e Entry) StartedAt() time.Time {
	if e.Receipt != nil && e.Receipt.StartedAt != nil {
		if t, err := time.Parse(time.RFC3339Nano, *e.Receipt.StartedAt); err == nil {
			return t
		}
	}
	return idTime(e.ID)
}

// idTime is the time in a capture ID: UTC, to the second; the zero time
// when id is not one.
func idTime(id string) time.Time {
	if len(id) < 16 {
		return time.Time{}
	}
	t, _ := time.Parse("20060102T150405Z", id[:16])
	return t
}

// EndedAt is when capture e of d last changed: now while it runs; the
// receipt's ended_at once final; else (abandoned, or a receipt without a
// readable ended_at) the latest modification time of its stream files,
// and not before e.StartedAt().
func (d *Dir) EndedAt(e Entry, now time.Time) time.Time {
	if e.Running {
		return now
	}
	if e.Final && e.Receipt != nil && e.Receipt.EndedAt != nil {
		if t, err := time.Parse(time.RFC3339Nano, *e.Receipt.EndedAt); err == nil {
			return t
		}
	}
	t := e.StartedAt()
	for _, f := range []FileEntry{e.Stdout, e.Stderr} {
		if f.Name == "" {
			continue
		}
		if fi, err := d.root.Lstat(e.ID + "/" + f.Name); err == nil && fi.ModTime().After(t) {
			t = fi.ModTime()
		}
	}
	return t
}

// List returns the captures in the directory, newest first by start time
// ([Entry.StartedAt]), the greater ID first among those that started at
// the same time (SPEC §8). Not by ID alone: an ID carries whole seconds,
// and its random rest orders the captures of one second at random.
// Names that are not capture IDs are ignored. An unreadable receipt is
// reported in the Entry, not as an error; the error is for the directory
// itself, or an *UnsafeError for a capture directory capwrap does not
// trust (another user's, or writable by group or others).
func (d *Dir) List() ([]Entry, error) {
	ids, err := d.ids()
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, len(ids))
	for _, id := range ids {
		e, err := d.Entry(id)
		if _, unsafe := errors.AsType[*UnsafeError](err); unsafe {
			return nil, err // refused, not skipped (strict.go)
		} else if err != nil {
			continue // vanished (pruned) meanwhile
		}
		entries = append(entries, e)
	}
	sortNewestFirst(entries)
	return entries, nil
}

// sortNewestFirst orders entries by start time, newest first, and by ID,
// greatest first, among equal start times.
func sortNewestFirst(entries []Entry) {
	starts := make(map[string]time.Time, len(entries))
	for _, e := range entries {
		starts[e.ID] = e.StartedAt()
	}
	slices.SortFunc(entries, func(a, b Entry) int {
		if c := starts[b.ID].Compare(starts[a.ID]); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
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
		var r receipt.Receipt
		if err = json.Unmarshal(b, &r); err == nil {
			e.Receipt = &r
		}
	}
	e.ReceiptErr = err
	e.Abandoned = !e.Running && !e.Final
	if e.Abandoned {
		fi, err := d.root.Lstat(id + "/" + KilledNote)
		e.KilledWithCapwrap = err == nil && fi.Mode().IsRegular()
	}
	return e, nil
}

func (d *Dir) fileEntry(id, stream string) FileEntry {
	fi, name := d.streamFile(id, stream)
	if fi == nil {
		return FileEntry{}
	}
	return FileEntry{Path: filepath.Join(d.path, id, name), Name: name, Size: fi.Size(), Live: name == stream+liveSuffix}
}

// ids returns the capture IDs in the directory, greatest first.
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

// Presented is capture e of d as `capwrap list` and `capwrap show` both
// present it, decided once here (issue 26: they disagreed about an
// abandoned capture), at time now:
//
//   - final (receipt.json exists): that receipt, as written;
//   - running: its live receipt with the bytes committed so far
//     (LiveReceipt), ended_at null;
//   - abandoned: the live receipt with the capture partial (abandoned,
//     or killed_with_capwrap), the process state, exit code and signal
//     null (unknown: no capwrap is left to know them) and its reason
//     saying why, ended_at the last write to its stream files
//     ([Dir.EndedAt], the age prune counts from) and duration_ms to it.
//
// It is nil for a final capture whose receipt could not be read
// (e.ReceiptErr says why). The result is e's own receipt, changed.
func (d *Dir) Presented(e Entry, now time.Time) *receipt.Receipt {
	if e.Final {
		return e.Receipt
	}
	rc := e.LiveReceipt(filepath.Join(d.path, e.ID))
	if e.Running {
		return rc
	}
	rc.Capture = e.CaptureStatus()
	rc.Process.State, rc.Process.ExitCode, rc.Process.Signal = "", nil, nil // null: unknown
	switch {
	case e.KilledWithCapwrap:
		rc.Process.Reason = new("killed with capwrap: capwrap was killed while the command ran, and the command's process group ended with it (SIGTERM from its watchdog, or on Linux from the kernel, and SIGKILL --kill-after later); how the command ended is unknown")
	case rc.Process.Reason == nil:
		rc.Process.Reason = new("unknown: capwrap ended without writing the receipt")
	}
	end := d.EndedAt(e, now)
	rc.EndedAt = new(end.UTC().Format(time.RFC3339Nano))
	if start := e.StartedAt(); !start.IsZero() {
		rc.DurationMS = new(end.Sub(start).Milliseconds())
	}
	return rc
}
