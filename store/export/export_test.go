package export

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
)

const (
	idDone      = "20261130T030612Z-aaaaaaaaaa"
	idAbandoned = "20261130T030613Z-bbbbbbbbbb"
)

var now = time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)

// writeCapture makes capture id in the tool-outputs directory top by hand:
// files name → content, and a receipt (receipt.json, or receipt.live.json
// when live) whose paths are the original's.
func writeCapture(t *testing.T, top, id string, live bool, files map[string]string) {
	t.Helper()
	dir := filepath.Join(top, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	suf, name := ".log", store.ReceiptFile
	if live {
		suf, name = ".live", store.LiveReceiptFile
	}
	rc := receipt.Receipt{Schema: receipt.Schema, ID: new(id), Dir: new("tool-outputs/" + id), AbsDir: new(dir),
		Process: receipt.Process{State: receipt.ProcessExited, ExitCode: new(3)}, Capture: receipt.Capture{State: receipt.CaptureComplete},
		Streams: receipt.Streams{Stdout: receipt.Stream{File: new("tool-outputs/" + id + "/stdout" + suf), CommittedBytes: new(int64(3))},
			Stderr: receipt.Stream{File: new("tool-outputs/" + id + "/stderr" + suf)}}}
	if live {
		rc.Process, rc.Capture = receipt.Process{State: receipt.ProcessRunning, PID: new(42)}, receipt.Capture{State: receipt.CapturePending}
	}
	b, err := rc.MarshalPretty()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// readExport reads an export, a directory or a tar.gz, as path → content,
// checking the modes: 0700 directories, 0600 files, nothing else.
func readExport(t *testing.T, to string) map[string]string {
	t.Helper()
	got := map[string]string{}
	if !IsArchive(to) {
		err := filepath.WalkDir(to, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(to, p)
			switch {
			case fi.IsDir() && fi.Mode().Perm() != 0o700, fi.Mode().IsRegular() && fi.Mode().Perm() != 0o600:
				t.Errorf("%s: mode %v", rel, fi.Mode())
			case !fi.IsDir() && !fi.Mode().IsRegular():
				t.Errorf("%s: not a regular file (%v)", rel, fi.Mode())
			case fi.Mode().IsRegular():
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				got[filepath.ToSlash(rel)] = string(b)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	f, err := os.Open(to)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fi, _ := f.Stat(); fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v", to, fi.Mode())
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	top := TopDir(to) + "/"
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		rel, ok := strings.CutPrefix(h.Name, top)
		switch {
		case !ok && h.Name != top:
			t.Errorf("%s: not under %s", h.Name, top)
		case h.Typeflag == tar.TypeDir && h.Mode != 0o700, h.Typeflag == tar.TypeReg && h.Mode != 0o600:
			t.Errorf("%s: mode %o", h.Name, h.Mode)
		case h.Typeflag != tar.TypeDir && h.Typeflag != tar.TypeReg:
			t.Errorf("%s: type %c", h.Name, h.Typeflag)
		case h.Typeflag == tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			got[rel] = string(b)
		}
	}
}

func TestExport(t *testing.T) {
	tests := []struct {
		name string
		// setup makes the captures in top and returns the ID to export
		// and a func to call after the export (or nil).
		setup func(t *testing.T, top string) (id string, after func())
		state string
		// files are the capture's files in the export (names in its
		// directory) with their content; "?" for any.
		files       map[string]string
		unavailable map[string]string // name → reason
		// receipt checks the export's receipt (nil: none is written).
		receipt func(t *testing.T, rc *receipt.Receipt)
	}{{
		name: "complete",
		setup: func(t *testing.T, top string) (string, func()) {
			writeCapture(t, top, idDone, false, map[string]string{"stdout.log": "out", "stderr.log": "", "preview.txt": "pv",
				"control": "not copied", "reservation": "0", "receipt.json.tmp": "x", "stdout.live": "a stray live file"})
			return idDone, nil
		},
		state:       "complete",
		files:       map[string]string{"stdout.log": "out", "stderr.log": "", "preview.txt": "pv", "receipt.json": "?"},
		unavailable: map[string]string{"arrival.idx": "missing"},
		receipt: func(t *testing.T, rc *receipt.Receipt) {
			if *rc.Process.ExitCode != 3 || rc.Capture.State != receipt.CaptureComplete {
				t.Errorf("receipt changed: %+v", rc)
			}
		},
	}, {
		name: "abandoned, as it is",
		setup: func(t *testing.T, top string) (string, func()) {
			writeCapture(t, top, idAbandoned, true, map[string]string{"stdout.live": "par", "stderr.live": "e"})
			return idAbandoned, nil
		},
		state:       "partial (abandoned)",
		files:       map[string]string{"stdout.live": "par", "stderr.live": "e", "receipt.live.json": "?"},
		unavailable: map[string]string{"arrival.idx": "missing"},
		receipt: func(t *testing.T, rc *receipt.Receipt) {
			if rc.Capture.State != receipt.CapturePending || rc.Process.State != receipt.ProcessRunning {
				t.Errorf("live receipt changed: %+v", rc)
			}
		},
	}, {
		name: "a stream pruned, a symbolic link planted",
		setup: func(t *testing.T, top string) (string, func()) {
			writeCapture(t, top, idDone, false, map[string]string{"stderr.log": "err"})
			secret := filepath.Join(filepath.Dir(top), "secret")
			os.WriteFile(secret, []byte("TOPSECRET"), 0o600)
			os.Symlink(secret, filepath.Join(top, idDone, "arrival.idx"))
			os.Symlink(secret, filepath.Join(top, idDone, "elsewhere"))
			return idDone, nil
		},
		state: "complete",
		files: map[string]string{"stderr.log": "err", "receipt.json": "?"},
		unavailable: map[string]string{"stdout.log": "missing",
			"arrival.idx": "arrival.idx is not a regular file; refusing it"},
		receipt: func(t *testing.T, rc *receipt.Receipt) {
			if rc.Streams.Stdout.File != nil {
				t.Errorf("stdout's file = %q, want null: it is not in the export", *rc.Streams.Stdout.File)
			}
		},
	}, {
		name: "no receipt: abandoned, and unavailable",
		setup: func(t *testing.T, top string) (string, func()) {
			writeCapture(t, top, idDone, false, map[string]string{"stdout.log": "o", "stderr.log": ""})
			os.Remove(filepath.Join(top, idDone, store.ReceiptFile))
			return idDone, nil
		},
		state:       "partial (abandoned)",
		files:       map[string]string{"stdout.log": "o", "stderr.log": ""},
		unavailable: map[string]string{"receipt.live.json": "missing", "arrival.idx": "missing"},
	}, {
		name: "running: its committed bytes, partial (exported_running)",
		setup: func(t *testing.T, top string) (string, func()) {
			d, _, err := store.Open(top, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := d.Create(now, store.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			a, err := c.Arrival(now)
			if err != nil {
				t.Fatal(err)
			}
			c.WriteLiveReceipt(&receipt.Receipt{Schema: receipt.Schema, ID: new(c.ID()), Dir: new(c.Path()), AbsDir: new(c.AbsPath()),
				Process: receipt.Process{State: receipt.ProcessRunning, PID: new(42)}, Capture: receipt.Capture{State: receipt.CapturePending}})
			for _, w := range []struct{ s, b string }{{"stdout", "one\ntw"}, {"stderr", "e\n"}} {
				c.Stream(w.s).Write([]byte(w.b))
				a.Writer(w.s).Write([]byte(w.b))
			}
			a.Close()
			c.Drain() // every byte in the files; the capture still runs (its lock held)
			return c.ID(), func() {
				c.Finalize()
				c.Publish(&receipt.Receipt{Schema: receipt.Schema})
				d.Close()
			}
		},
		state: "partial (exported_running)",
		files: map[string]string{"stdout.log": "one\ntw", "stderr.log": "e\n", "arrival.idx": "?", "receipt.json": "?"},
		receipt: func(t *testing.T, rc *receipt.Receipt) {
			out := rc.Streams.Stdout
			if rc.Capture.State != receipt.CapturePartial || rc.Capture.Reason == nil || *rc.Capture.Reason != receipt.ReasonExportedRunning ||
				*out.CommittedBytes != 6 || *out.Lines != 1 || !*out.LastLinePartial || out.SHA256 != nil ||
				*rc.Streams.Stderr.Lines != 1 || *rc.Streams.Stderr.LastLinePartial || *rc.Process.PID != 42 {
				b, _ := rc.MarshalPretty()
				t.Errorf("receipt of a running capture:\n%s", b)
			}
		},
	}}
	for _, tt := range tests {
		for _, form := range []string{"out", "out.tar.gz"} {
			t.Run(tt.name+" to "+form, func(t *testing.T) {
				base := t.TempDir()
				top := filepath.Join(base, "tool-outputs")
				id, after := tt.setup(t, top)
				d, err := store.OpenExisting(top)
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				to := filepath.Join(base, "x", form)
				m, err := Export(d, []string{id, id}, to, Options{Version: "v1.2.3", Now: now})
				if after != nil {
					after()
				}
				if err != nil {
					t.Fatal(err)
				}
				got := readExport(t, to)
				checkManifest(t, m, got)
				if len(m.Captures) != 1 || m.Captures[0].String() != tt.state {
					t.Fatalf("manifest captures %+v, want one, %s", m.Captures, tt.state)
				}
				c := m.Captures[0]
				un := map[string]string{}
				for _, u := range c.Unavailable {
					un[strings.TrimPrefix(u.Path, id+"/")] = u.Reason
				}
				if tt.unavailable == nil {
					tt.unavailable = map[string]string{}
				}
				if !mapsEqual(un, tt.unavailable) {
					t.Errorf("unavailable %v, want %v", un, tt.unavailable)
				}
				want := map[string]bool{".gitignore": true, ManifestName: true}
				for name, content := range tt.files {
					p := id + "/" + name
					want[p] = true
					if content != "?" && got[p] != content {
						t.Errorf("%s = %q, want %q", p, got[p], content)
					}
				}
				for p := range got {
					if !want[p] {
						t.Errorf("%s exported", p)
					}
					if strings.Contains(got[p], "TOPSECRET") {
						t.Errorf("%s holds what a symbolic link pointed to", p)
					}
				}
				for p := range want {
					if _, ok := got[p]; !ok {
						t.Errorf("%s not exported", p)
					}
				}
				for _, name := range []string{store.ReceiptFile, store.LiveReceiptFile} {
					b, ok := got[id+"/"+name]
					if !ok {
						continue
					}
					var rc receipt.Receipt
					if err := json.Unmarshal([]byte(b), &rc); err != nil {
						t.Fatal(err)
					}
					checkPaths(t, &rc, id, got)
					if tt.receipt != nil {
						tt.receipt(t, &rc)
					}
				}
			})
		}
	}
}

// checkPaths: a receipt's paths are relative to the export, and name
// files it holds.
func checkPaths(t *testing.T, rc *receipt.Receipt, id string, got map[string]string) {
	t.Helper()
	if rc.Dir == nil || *rc.Dir != id || rc.AbsDir != nil {
		t.Errorf("receipt dir %v, abs_dir %v; want %s, null", rc.Dir, rc.AbsDir, id)
	}
	for _, f := range []*string{rc.Streams.Stdout.File, rc.Streams.Stderr.File} {
		if f == nil {
			continue
		}
		if _, ok := got[*f]; !ok {
			t.Errorf("receipt names file %s, not in the export", *f)
		}
	}
}

// checkManifest: the manifest written is m, its files' sizes and hashes
// are those of the export's files.
func checkManifest(t *testing.T, m *Manifest, got map[string]string) {
	t.Helper()
	var written Manifest
	if err := json.Unmarshal([]byte(got[ManifestName]), &written); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if written.Schema != Schema || written.Version != "v1.2.3" || written.CreatedAt != "2026-11-30T04:00:00Z" {
		t.Errorf("manifest %+v", written)
	}
	for _, c := range written.Captures {
		for _, f := range c.Files {
			sum := sha256.Sum256([]byte(got[f.Path]))
			if int64(len(got[f.Path])) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 {
				t.Errorf("manifest: %s size %d sha256 %s; the file has %d bytes", f.Path, f.Size, f.SHA256, len(got[f.Path]))
			}
		}
	}
	if len(written.Captures) != len(m.Captures) {
		t.Errorf("manifest.json has %d captures, Export returned %d", len(written.Captures), len(m.Captures))
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestExportRefuses: a destination that exists is never written into or
// over, and a failed export leaves nothing behind.
func TestExportRefuses(t *testing.T) {
	base := t.TempDir()
	top := filepath.Join(base, "tool-outputs")
	writeCapture(t, top, idDone, false, map[string]string{"stdout.log": "out", "stderr.log": ""})
	d, err := store.OpenExisting(top)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	full := filepath.Join(base, "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "keep"), []byte("mine"), 0o644)
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("mine"), 0o644)
	taken := filepath.Join(base, "taken.tar.gz")
	os.WriteFile(taken, []byte("mine"), 0o644)
	link := filepath.Join(base, "link")
	os.Symlink(full, link)
	linkTar := filepath.Join(base, "link.tgz")
	os.Symlink(file, linkTar)
	tests := []struct {
		to     string
		exists bool
	}{{full, true}, {file, true}, {taken, true}, {link, false}, {linkTar, true}}
	for _, tt := range tests {
		_, err := Export(d, []string{idDone}, tt.to, Options{Now: now})
		if err == nil || errors.Is(err, ErrExists) != tt.exists {
			t.Errorf("Export to %s: %v; want an error, ErrExists %v", tt.to, err, tt.exists)
		}
	}
	for _, p := range []string{filepath.Join(full, "keep"), file, taken} {
		if b, _ := os.ReadFile(p); string(b) != "mine" {
			t.Errorf("%s changed: %q", p, b)
		}
	}
	if names, _ := os.ReadDir(full); len(names) != 1 {
		t.Errorf("%s holds %d names, want 1", full, len(names))
	}

	// An unknown capture fails the export: what it made is removed.
	for _, to := range []string{filepath.Join(base, "new"), filepath.Join(base, "new.tar.gz")} {
		if _, err := Export(d, []string{idDone, "20261130T030699Z-zzzzzzzzzz"}, to, Options{Now: now}); err == nil {
			t.Errorf("Export of an unknown capture to %s: no error", to)
		}
		if _, err := os.Lstat(to); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a failed export left %s (%v)", to, err)
		}
	}
	// Into an empty directory that exists: what it made is removed, the
	// directory stays.
	empty := filepath.Join(base, "empty")
	os.Mkdir(empty, 0o755)
	if _, err := Export(d, []string{idDone, "20261130T030699Z-zzzzzzzzzz"}, empty, Options{Now: now}); err == nil {
		t.Error("Export of an unknown capture: no error")
	}
	if names, err := os.ReadDir(empty); err != nil || len(names) != 0 {
		t.Errorf("a failed export into an empty directory left %v (%v)", names, err)
	}
}

func TestTopDir(t *testing.T) {
	for in, want := range map[string]string{
		"out.tar.gz": "out", "a/b/captures.tgz": "captures", ".tar.gz": "capwrap-export", "x.y.tar.gz": "x.y",
	} {
		if got := TopDir(in); got != want {
			t.Errorf("TopDir(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]bool{"a.tar.gz": true, "a.tgz": true, "a.tar": false, "a": false, "a.gz": false} {
		if IsArchive(in) != want {
			t.Errorf("IsArchive(%q) = %v", in, !want)
		}
	}
}
