package store

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The directory quota ledger (SPEC §4 "Limits").
//
// Nothing but the files on disk is trusted. A capture that wants to write n
// more bytes than it has reserved takes the directory lock (flock on .lock,
// plus a mutex for captures of the same process) and rebuilds the ledger:
// for every capture directory, the sizes of its four stream files, and, if
// the capture is running (its directory's flock is held), the larger of that
// and the reservation recorded in its "reservation" file. A capture that is
// not running counts only its file sizes, so a crashed capture never holds
// quota beyond the bytes it actually left. The capture then records its new
// reservation (whole chunks, never beyond the quota) in its own reservation
// file and releases the lock. Its writers only write bytes covered by the
// reservation, so the sum of all stream files in the directory never exceeds
// the quota.

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
		return fmt.Errorf("lock quota ledger: %w", err)
	}
	defer flock(d.lock, unix.LOCK_UN)
	used, err := d.usage(c.id)
	if err != nil {
		return fmt.Errorf("read quota ledger: %w", err)
	}
	avail := c.lim.DirQuota - used - c.reserved
	grant := min(need, max(avail, 0))
	if grant == 0 {
		return nil
	}
	if err := writeAtomic(c.root, c.dirf, reservationName, []byte(strconv.FormatInt(c.reserved+grant, 10)+"\n"), false); err != nil {
		return fmt.Errorf("record quota reservation: %w", err)
	}
	c.reserved += grant
	return nil
}

// usage returns the bytes the ledger charges to all captures in d except
// the one named except. Caller holds the directory lock.
func (d *Dir) usage(except string) (int64, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return 0, err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range entries {
		name := e.Name()
		if name == except || !e.IsDir() || !ValidID(name) {
			continue
		}
		size := d.streamBytes(name)
		if running, _ := d.probeRunning(name); running {
			if r := d.readReservation(name); r > size {
				size = r
			}
		}
		total += size
	}
	return total, nil
}

// streamBytes sums the sizes of a capture's stream files (.live and .log).
func (d *Dir) streamBytes(id string) int64 {
	var n int64
	for _, s := range []string{Stdout, Stderr} {
		for _, suf := range []string{liveSuffix, logSuffix} {
			if fi, err := d.root.Lstat(id + "/" + s + suf); err == nil && fi.Mode().IsRegular() {
				n += fi.Size()
			}
		}
	}
	return n
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
