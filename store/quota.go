package store

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The directory quota ledger (SPEC §4 "Limits").
//
// Nothing but the files on disk is trusted. A capture that wants to write n
// more bytes than it has reserved takes the directory lock (flock on .lock,
// plus a mutex for captures of the same process) and rebuilds the ledger:
// for every capture directory, the sizes of its four stream files and of
// its arrival index (arrival.idx), and, if the capture is running (its
// directory's flock is held), the larger of that and the reservation
// recorded in its "reservation" file. A capture that is not running counts
// only its file sizes, so a crashed capture never holds quota beyond the
// bytes it actually left. The capture then records its new reservation
// (whole chunks, never beyond the quota) in its own reservation file and
// releases the lock. Publish removes the file; a crash leaves it, harmless
// once the lock is free. Its stream writers and its arrival index only
// write bytes covered by the reservation, so the stream files and indexes
// in the directory never exceed the quota together. Receipts, the
// reservation file and .lock are not charged (a few KiB per capture).

// reserve returns how many of the next n bytes the caller may write, at most
// n; fewer means the directory quota is reached. The error reports a failure
// to read the ledger or record the reservation.
func (c *Capture) reserve(n int64) (int64, error) {
	c.quotaMu.Lock()
	defer c.quotaMu.Unlock()
	if c.granted+n > c.reserved {
		need := c.granted + n - c.reserved
		chunk := c.lim.QuotaChunk
		need = (need + chunk - 1) / chunk * chunk
		if err := c.reserveMore(need); err != nil {
			return 0, err
		}
	}
	allowed := min(n, c.reserved-c.granted)
	c.granted += allowed
	return allowed, nil
}

// reserveMore raises c.reserved by up to need bytes under the directory
// lock. Caller holds c.quotaMu.
func (c *Capture) reserveMore(need int64) error {
	d := c.d
	d.quotaMu.Lock()
	defer d.quotaMu.Unlock()
	if err := flock(d.lock, unix.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s (the --dir-quota ledger): %w", filepath.Join(c.d.path, lockName), err)
	}
	defer flock(d.lock, unix.LOCK_UN)
	used, err := d.usage(c.id)
	if err != nil {
		return fmt.Errorf("count the bytes kept in %s (--dir-quota): %w", c.d.path, UnwrapPath(err))
	}
	avail := c.lim.DirQuota - used - c.reserved
	grant := min(need, max(avail, 0))
	if grant == 0 {
		return nil
	}
	if err := c.recordReservation(c.reserved + grant); err != nil {
		return fmt.Errorf("write %s (the bytes it may still keep under --dir-quota): %w", filepath.Join(c.Path(), reservationName), UnwrapPath(err))
	}
	c.reserved += grant
	return nil
}

// recordReservation writes v to the capture's reservation file, created
// (exclusively, 0600) on first use and then overwritten in place: readers
// only read it under the directory lock that the writer holds, so a
// fixed-width in-place write needs no rename. Caller holds the directory
// lock.
func (c *Capture) recordReservation(v int64) error {
	if c.resFile == nil {
		f, err := c.root.OpenFile(reservationName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return err
		}
		c.resFile = f
	}
	_, err := c.resFile.WriteAt(fmt.Appendf(nil, "%020d\n", v), 0)
	return err
}

// ledgerHeader starts the ledger cache kept in the .lock file.
const ledgerHeader = "capwrap-ledger v1\n"

// usage returns the bytes the ledger charges to all captures in d except
// the one named except. Caller holds the directory lock.
//
// A capture whose lock is free never writes again, so its size is final:
// usage caches it in the .lock file ("ID SIZE" lines) and the next scan
// reads one directory listing instead of probing and measuring every old
// capture. A cached capture that is gone (pruned) drops out with its name;
// a torn or foreign cache is ignored and rebuilt.
func (d *Dir) usage(except string) (int64, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return 0, err
	}
	names, err := f.Readdirnames(-1) // no stat per entry
	f.Close()
	if err != nil {
		return 0, err
	}
	cache := d.readLedgerCache()
	fresh := make(map[string]int64, len(cache))
	changed := false
	var total int64
	for _, name := range names {
		if name == except || !ValidID(name) {
			continue
		}
		if size, ok := cache[name]; ok {
			fresh[name] = size
			total += size
			continue
		}
		// Probe first: a capture found not running has final sizes.
		running, err := d.probeRunning(name)
		size := d.streamBytes(name)
		switch {
		case running:
			size = max(size, d.readReservation(name))
		case err == nil:
			fresh[name] = size
			changed = true
		}
		total += size
	}
	if changed || len(fresh) != len(cache) {
		d.writeLedgerCache(fresh)
	}
	return total, nil
}

// readLedgerCache parses the cache in the .lock file; anything malformed
// is skipped.
func (d *Dir) readLedgerCache() map[string]int64 {
	cache := map[string]int64{}
	fi, err := d.lock.Stat()
	if err != nil || fi.Size() <= int64(len(ledgerHeader)) || fi.Size() > 64<<20 {
		return cache
	}
	b := make([]byte, fi.Size())
	n, _ := d.lock.ReadAt(b, 0)
	text, ok := strings.CutPrefix(string(b[:n]), ledgerHeader)
	if !ok {
		return cache
	}
	for {
		line, rest, ok := strings.Cut(text, "\n")
		if !ok {
			break // a torn last line
		}
		text = rest
		id, num, ok := strings.Cut(line, " ")
		v, err := strconv.ParseInt(num, 10, 64)
		if ok && err == nil && v >= 0 && ValidID(id) {
			cache[id] = v
		}
	}
	return cache
}

// writeLedgerCache replaces the cache in the .lock file. Failing to write
// it costs only speed.
func (d *Dir) writeLedgerCache(cache map[string]int64) {
	b := make([]byte, 0, len(ledgerHeader)+len(cache)*(idLen+12))
	b = append(b, ledgerHeader...)
	for id, v := range cache {
		b = append(b, id...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, v, 10)
		b = append(b, '\n')
	}
	if _, err := d.lock.WriteAt(b, 0); err == nil {
		d.lock.Truncate(int64(len(b)))
	}
}

// streamBytes sums the sizes of a capture's two stream files and of its
// arrival index: what the directory quota charges it.
func (d *Dir) streamBytes(id string) int64 {
	var n int64
	for _, s := range []string{Stdout, Stderr} {
		if fi, _ := d.streamFile(id, s); fi != nil {
			n += fi.Size()
		}
	}
	if fi, err := d.root.Lstat(id + "/" + arrivalName); err == nil && fi.Mode().IsRegular() {
		n += fi.Size()
	}
	return n
}

// streamFile finds a stream's file, .log or .live, without seeing it
// twice or missing it while Finalize renames one to the other: .log first,
// then .live, then .log again.
func (d *Dir) streamFile(id, stream string) (fs.FileInfo, string) {
	for _, suf := range []string{logSuffix, liveSuffix, logSuffix} {
		name := stream + suf
		if fi, err := d.root.Lstat(id + "/" + name); err == nil && fi.Mode().IsRegular() {
			return fi, name
		}
	}
	return nil, ""
}

func (d *Dir) readReservation(id string) int64 {
	b, err := d.root.ReadFile(id + "/" + reservationName)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// probeRunning reports whether the capture id holds its lock, by trying a
// shared lock on its directory without waiting.
func (d *Dir) probeRunning(id string) (bool, error) {
	fi, err := d.root.Lstat(id)
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("%s is not a directory", id)
	}
	if err := checkTrusted("capture directory", filepath.Join(d.path, id), fi); err != nil {
		return false, err
	}
	f, err := d.root.OpenFile(id, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	switch err := flock(f, unix.LOCK_SH|unix.LOCK_NB); err {
	case nil:
		return false, nil
	case unix.EWOULDBLOCK:
		return true, nil
	default:
		return false, &fs.PathError{Op: "flock", Path: id, Err: err}
	}
}
