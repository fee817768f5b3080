package events

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Opener checks spec, the --events argument (SPEC §12: a file, a FIFO, or
// "fd:N"), and returns the function that opens it for a Publisher: fd:N
// is a duplicate of descriptor N, which must be open (0 is refused: it is
// stdin), so that closing the events never closes the caller's descriptor
// (fd:1 is still capwrap's stdout for the preview); a FIFO is opened for
// writing when a reader opens it (the publisher waits in the background);
// any other path is opened now, created if need be (0600), so that a bad
// path refuses the run before it starts, and truncated only when a
// publisher opens it: a capwrap that checks the flag and publishes
// nothing (one that passes its command through to the capwrap that
// captures it, SPEC §1) leaves the file as it is. The error says what is
// wrong with spec.
func Opener(spec string) (func() (io.WriteCloser, error), error) {
	if rest, ok := strings.CutPrefix(spec, "fd:"); ok {
		n, err := strconv.Atoi(rest)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q: want fd:N with N a descriptor number above 0", spec)
		}
		dup, err := unix.FcntlInt(uintptr(n), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			return nil, fmt.Errorf("%q: descriptor %d is not open", spec, n)
		}
		f := os.NewFile(uintptr(dup), spec)
		return func() (io.WriteCloser, error) { return f, nil }, nil
	}
	if spec == "" {
		return nil, fmt.Errorf("an empty path")
	}
	if fi, err := os.Stat(spec); err == nil && fi.Mode()&fs.ModeNamedPipe != 0 {
		return func() (io.WriteCloser, error) { return os.OpenFile(spec, os.O_WRONLY, 0) }, nil
	}
	f, err := os.OpenFile(spec, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return func() (io.WriteCloser, error) {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if err := f.Truncate(0); err != nil {
				return nil, err
			}
		}
		return f, nil
	}, nil
}
