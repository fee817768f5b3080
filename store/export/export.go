// Package export copies captures out of a tool-outputs directory (SPEC §8
// `capwrap export`): the files of each capture directory's layout, the
// receipts with their paths rewritten relative to the export, and a
// manifest, into a new directory or a gzip'd tar. An exported directory
// is a tool-outputs directory like any other: the verbs of SPEC §8 read it
// with --dir.
//
// Everything it reads goes through the store ([store.Dir.OpenStream],
// [store.Dir.OpenFile]): only the names of the layout, never a symbolic
// link followed, never a file with more than one hard link, nothing
// outside the tool-outputs directory. It knows nothing of processes: a
// running capture is the bytes its files hold when they are looked at, as
// readers see it (package readback).
//
// The layout of an export (in a tar.gz, under one top directory named
// after the file, FILE.tar.gz → FILE/):
//
//	EXPORT/                0700
//	  .gitignore           "*", as in a tool-outputs directory
//	  ID/                  0700, one per capture
//	    stdout.log …       0600: the files found, copied byte for byte
//	                       (a running capture's receipt and index rewritten)
//	  manifest.json        0600, written last: a directory without it is
//	                       an export that did not finish
package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
)

// Schema is the manifest's "schema".
const Schema = "capwrap.export/v1"

// ManifestName is the manifest's name at the root of an export.
const ManifestName = "manifest.json"

// maxReceipt is the largest receipt file an export reads, bytes (as
// store.Dir.ReadReceipt).
const maxReceipt = 16 << 20

// Manifest is manifest.json: what an export holds. Times are RFC 3339
// UTC; sizes in bytes.
type Manifest struct {
	Schema    string    `json:"schema"`
	CreatedAt string    `json:"created_at"`
	Version   string    `json:"capwrap_version"`
	Captures  []Capture `json:"captures"`
}

// Capture is one capture of the manifest. State and Reason are the
// capture's as exported: a finished capture's receipt's; partial,
// exported_running for one that was running (the export holds the bytes
// committed then); partial, abandoned for one whose capwrap died without a
// receipt; unknown when its receipt could not be read.
type Capture struct {
	ID          string               `json:"id"`
	State       receipt.CaptureState `json:"state"`
	Reason      *receipt.Reason      `json:"reason"`
	Files       []File               `json:"files"`
	Unavailable []Unavailable        `json:"unavailable"`
}

// File is a file of the export: its path from the export's root, its size
// in bytes and the hex SHA-256 of its bytes in the export.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Unavailable is a file the capture should have had and the export does
// not hold: a stream file pruned by hand, a receipt missing or unreadable,
// a name that is a symbolic link (refused, not followed). Path is where
// the export would have held it.
type Unavailable struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// StreamBytes is the size of the capture's stream files in the export,
// bytes.
func (c Capture) StreamBytes() int64 {
	var n int64
	for _, f := range c.Files {
		switch strings.TrimPrefix(f.Path, c.ID+"/") {
		case store.StreamFile(store.Stdout, false), store.StreamFile(store.Stdout, true),
			store.StreamFile(store.Stderr, false), store.StreamFile(store.Stderr, true):
			n += f.Size
		}
	}
	return n
}

// String is the capture's state as people read it: "complete", "partial
// (exported_running)".
func (c Capture) String() string {
	return receipt.Capture{State: c.State, Reason: c.Reason}.String()
}

// Options are an export's facts from outside: the manifest's capwrap
// version and creation time.
type Options struct {
	Version string
	Now     time.Time
}

// ErrExists reports a destination that may not be used: a directory that
// is not empty, a file where a directory should be made, an archive's
// name already taken. An export never writes into or over anything.
var ErrExists = errors.New("exists")

// IsArchive reports whether to names a gzip'd tar (it ends in .tar.gz or
// .tgz): [Export] then writes one instead of a directory.
func IsArchive(to string) bool {
	return strings.HasSuffix(to, ".tar.gz") || strings.HasSuffix(to, ".tgz")
}

// Export copies the captures ids (full IDs, as [store.Dir.Lookup] gives
// them; repeats are exported once) of d to to: a gzip'd tar, created
// exclusively 0600, when [IsArchive] says so; else a directory, created
// 0700 (missing parents too) or one that exists and is empty. It returns
// the manifest it wrote. A file that is missing or refused is marked
// unavailable in the manifest and the export goes on; any other error
// ends it, and what it made is removed. The error wraps ErrExists when to
// may not be used.
func Export(d *store.Dir, ids []string, to string, o Options) (*Manifest, error) {
	var s sink
	var err error
	if IsArchive(to) {
		s, err = newTarSink(to, o.Now)
	} else {
		s, err = newDirSink(to)
	}
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			s.abort()
		}
	}()
	m := &Manifest{Schema: Schema, CreatedAt: o.Now.UTC().Format(time.RFC3339), Version: o.Version, Captures: []Capture{}}
	if err := putBytes(s, ".gitignore", []byte("*\n"), o.Now); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		c, err := exportCapture(s, d, id, o.Now)
		if err != nil {
			return nil, fmt.Errorf("capture %s: %w", id, err)
		}
		m.Captures = append(m.Captures, c)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := putBytes(s, ManifestName, append(b, '\n'), o.Now); err != nil {
		return nil, err
	}
	if err := s.close(); err != nil {
		return nil, err
	}
	ok = true
	return m, nil
}

func putBytes(s sink, name string, b []byte, mtime time.Time) error {
	return s.file(name, int64(len(b)), mtime, bytes.NewReader(b))
}

// capExport is the export of one capture.
type capExport struct {
	s   sink
	d   *store.Dir
	id  string
	now time.Time
	c   *Capture
}

// copied is what the export holds of one stream.
type copied struct {
	name        string // in the capture directory of the export; "" when unavailable
	size        int64
	lines       int64
	lastPartial bool
}

// exportCapture copies capture id: its streams first, so that a running
// capture's receipt and index describe the bytes copied, then its index,
// a job's preview and its receipt.
func exportCapture(s sink, d *store.Dir, id string, now time.Time) (Capture, error) {
	e, err := d.Entry(id)
	if err != nil {
		return Capture{}, err
	}
	c := Capture{ID: id, Files: []File{}, Unavailable: []Unavailable{}}
	if e.Running {
		c.State, c.Reason = receipt.CapturePartial, new(receipt.ReasonExportedRunning)
	} else {
		st := e.CaptureStatus()
		c.State, c.Reason = st.State, st.Reason
	}
	if err := s.dir(id); err != nil {
		return c, err
	}
	x := &capExport{s: s, d: d, id: id, now: now, c: &c}
	var streams [2]copied
	for i, name := range []string{store.Stdout, store.Stderr} {
		if streams[i], err = x.stream(name, e); err != nil {
			return c, err
		}
	}
	if err := x.arrival(e.Running, streams); err != nil {
		return c, err
	}
	if err := x.preview(); err != nil {
		return c, err
	}
	if err := x.receipt(e, streams); err != nil {
		return c, err
	}
	return c, nil
}

// unavailable marks the file name of the capture unavailable: missing
// (err wraps fs.ErrNotExist), or refused or unreadable, as err says.
func (x *capExport) unavailable(name string, err error) {
	reason := "missing"
	if !errors.Is(err, fs.ErrNotExist) {
		reason = strings.TrimPrefix(store.UnwrapPath(err).Error(), x.id+"/")
	}
	x.c.Unavailable = append(x.c.Unavailable, Unavailable{Path: x.id + "/" + name, Reason: reason})
}

// put writes size bytes of r as the capture's file name, and lists it.
func (x *capExport) put(name string, size int64, mtime time.Time, r io.Reader) error {
	h := sha256.New()
	path := x.id + "/" + name
	if err := x.s.file(path, size, mtime, io.TeeReader(r, h)); err != nil {
		return err
	}
	x.c.Files = append(x.c.Files, File{Path: path, Size: size, SHA256: hex.EncodeToString(h.Sum(nil))})
	return nil
}

// stream copies the file of stream of capture e: its size when looked at
// (a running capture's committed bytes), under its own name, or under the
// final name (.log) when the capture is running. A stream file missing or
// refused is unavailable.
func (x *capExport) stream(stream string, e store.Entry) (copied, error) {
	want := store.StreamFile(stream, e.Abandoned)
	f, name, err := x.d.OpenStream(x.id, stream)
	if err != nil {
		x.unavailable(want, err)
		return copied{}, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return copied{}, err
	}
	cp := copied{name: name, size: fi.Size()}
	if e.Running {
		cp.name = store.StreamFile(stream, false)
	}
	lc := &lineCounter{}
	if err := x.put(cp.name, cp.size, fi.ModTime(), io.TeeReader(io.NewSectionReader(f, 0, cp.size), lc)); err != nil {
		return copied{}, err
	}
	cp.lines, cp.lastPartial = lc.lines, lc.last != '\n' && cp.size > 0
	return cp, nil
}

// lineCounter counts the newlines written to it and remembers the last
// byte.
type lineCounter struct {
	lines int64
	last  byte
}

func (l *lineCounter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		l.lines += int64(bytes.Count(p, []byte{'\n'}))
		l.last = p[len(p)-1]
	}
	return len(p), nil
}

// arrival copies the arrival index; a running capture's is cut to the
// stream bytes copied ([store.ClipArrival]).
func (x *capExport) arrival(running bool, streams [2]copied) error {
	f, err := x.d.OpenFile(x.id, store.ArrivalFile)
	if err != nil {
		x.unavailable(store.ArrivalFile, err)
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !running {
		return x.put(store.ArrivalFile, fi.Size(), fi.ModTime(), io.NewSectionReader(f, 0, fi.Size()))
	}
	b, err := store.ClipArrival(f, streams[0].size, streams[1].size)
	if err != nil {
		x.unavailable(store.ArrivalFile, err)
		return nil
	}
	return x.put(store.ArrivalFile, int64(len(b)), fi.ModTime(), bytes.NewReader(b))
}

// preview copies a background job's preview.txt, when it has one (a
// foreground run's capture has none: not unavailable), and the watchdog's
// note of a capture killed with capwrap (store.KilledNote), so that the
// export reads as partial (killed_with_capwrap) as its source does.
func (x *capExport) preview() error {
	for _, name := range []string{store.PreviewFile, store.KilledNote} {
		if err := x.optional(name); err != nil {
			return err
		}
	}
	return nil
}

// optional copies the capture's file name when it has one.
func (x *capExport) optional(name string) error {
	f, err := x.d.OpenFile(x.id, name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		x.unavailable(name, err)
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return x.put(name, fi.Size(), fi.ModTime(), io.NewSectionReader(f, 0, fi.Size()))
}

// receipt writes the capture's receipt with its paths rewritten: a
// finished capture's receipt.json; an abandoned one's receipt.live.json
// (it stays abandoned in the export); for a running capture a
// receipt.json made from its live receipt, partial (exported_running),
// with each stream's bytes and lines as copied.
func (x *capExport) receipt(e store.Entry, streams [2]copied) error {
	name := store.ReceiptFile
	if !e.Final {
		name = store.LiveReceiptFile
	}
	rc, mtime, err := x.readReceipt(name)
	switch {
	case err != nil && !e.Running:
		x.unavailable(name, err)
		return nil
	case err != nil:
		x.unavailable(name, err)
		mtime = x.now
		fallthrough
	case e.Running:
		// A running capture's receipt is this one; the export's own
		// receipt.json replaces its live one.
		e.Receipt = rc
		rc = e.LiveReceipt("")
		name = store.ReceiptFile
		rc.Capture = receipt.Capture{State: receipt.CapturePartial, Reason: new(receipt.ReasonExportedRunning)}
		for i, st := range []*receipt.Stream{&rc.Streams.Stdout, &rc.Streams.Stderr} {
			st.SHA256 = nil // of a complete capture only (SPEC §7)
			if streams[i].name != "" {
				st.CommittedBytes, st.Lines, st.LastLinePartial = new(streams[i].size), new(streams[i].lines), new(streams[i].lastPartial)
			}
		}
	}
	rc.Dir, rc.AbsDir = new(x.id), nil
	for i, st := range []*receipt.Stream{&rc.Streams.Stdout, &rc.Streams.Stderr} {
		st.File = nil
		if streams[i].name != "" {
			st.File = new(x.id + "/" + streams[i].name)
		}
	}
	b, err := rc.MarshalPretty()
	if err != nil {
		return err
	}
	return x.put(name, int64(len(b)), mtime, bytes.NewReader(b))
}

// readReceipt reads and decodes the capture's receipt file name, with its
// modification time.
func (x *capExport) readReceipt(name string) (*receipt.Receipt, time.Time, error) {
	f, err := x.d.OpenFile(x.id, name)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxReceipt+1))
	switch {
	case err != nil:
		return nil, time.Time{}, err
	case len(b) > maxReceipt:
		return nil, time.Time{}, fmt.Errorf("%s is too large", name)
	}
	var rc receipt.Receipt
	if err := json.Unmarshal(b, &rc); err != nil {
		return nil, time.Time{}, fmt.Errorf("%s is not a receipt: %v", name, err)
	}
	return &rc, fi.ModTime(), nil
}
