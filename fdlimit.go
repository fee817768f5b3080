//go:build unix

package main

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// runFDs is how many free file descriptors a run needs: the two streams'
// pipes (or ptys), the capture's files and directories, the quota lock
// and ledger, the arrival index, the watchdog's pipe, --events and
// --receipt-file, with room to spare. Measured: `capwrap --keep always --
// sh -c ...` keeps everything with 21 free and loses part of its capture
// with 17 (issue 26).
const runFDs = 32

// checkFDs refuses a run that would run out of file descriptors part way
// (ulimit -n 16): the command would start without a watchdog or with its
// capture cut, after a confusing "too many open files". It makes sure
// runFDs descriptors can be opened now, by duplicating one and closing
// the copies again, before anything is started or captured; the error
// names the limit. Go raises the soft limit to the hard one at start-up,
// so the hard limit is the one to raise.
func checkFDs() error {
	// A soft limit far above what a process starting up holds needs no
	// trial: the usual 1024 or more costs one getrlimit, not 64 calls.
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur >= 4*runFDs+64 {
		return nil
	}
	fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fdError(err)
	}
	fds := []int{fd}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for len(fds) < runFDs {
		d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return fdError(err)
		}
		fds = append(fds, d)
	}
	return nil
}

// fdError is the refusal for a run that cannot have runFDs descriptors.
func fdError(err error) error {
	if err != unix.EMFILE && err != unix.ENFILE {
		return nil // not a shortage: the run says what goes wrong, if anything
	}
	var lim unix.Rlimit
	limit := "unknown"
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil {
		limit = fmt.Sprint(lim.Cur)
	}
	if err == unix.ENFILE {
		return refusal{fmt.Sprintf("the system's table of open files is full: capwrap needs %d free file descriptors to run a command and keep its output", runFDs),
			"close programs that hold many files, or raise the system's limit (fs.file-max on Linux, kern.maxfiles on BSD and macOS)"}
	}
	return refusal{fmt.Sprintf("too many open files: the open-file limit (ulimit -n) is %s, and capwrap needs %d free file descriptors to run a command and keep its output", limit, runFDs),
		"raise the limit in the shell that starts capwrap (ulimit -n 1024), or close the descriptors it inherits"}
}
