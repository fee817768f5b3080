package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/redact"
	"github.com/capwrap/capwrap/store"
)

// maxRedactFileBytes bounds the bytes read from the --redact-file files,
// all of them together, line ends included. The matcher built from their
// values costs about 1 KiB of memory per byte of values (peak RSS of
// "capwrap --redact-file F -- true", lines of 16 to 1000 random bytes:
// 10 MiB without F; 15 MiB for 8 KiB; 25 MiB for 16 KiB; 42 MiB for
// 32 KiB; 76 MiB for 64 KiB; 1.1 GiB for 1 MiB), so this bound keeps
// capwrap within SPEC §9's 32 MiB. Reading stops at the bound plus one
// byte: /dev/zero or a huge file is refused, not read to the end.
const maxRedactFileBytes = 16 << 10

// redactFileWait bounds how long a --redact-file that is a FIFO or a
// device (process substitution, <(pass show x)) may take to give its end
// of file: the command has not started yet.
const redactFileWait = 10 * time.Second

// readBounded reads the file at path, at most n+1 bytes of it. It is
// opened without blocking (a FIFO nobody writes to reads as empty, rather
// than waiting for a writer for ever), and a read that takes longer than
// redactFileWait is an error.
func readBounded(path string, n int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	f.SetReadDeadline(time.Now().Add(redactFileWait)) // FIFOs and ttys: files cannot time out
	b, err := io.ReadAll(io.LimitReader(f, n+1))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, fmt.Errorf("no end of file after %v", redactFileWait)
	}
	return b, err
}

// hintedError is a refusal that comes with what to do about it; prepare
// says the hint after the error.
type hintedError struct {
	err  error
	hint string
}

func (e hintedError) Error() string { return e.err.Error() }
func (e hintedError) Unwrap() error { return e.err }

// hintOf is the hint that err carries, or "".
func hintOf(err error) string {
	var h hintedError
	if errors.As(err, &h) {
		return h.hint
	}
	return ""
}

// startPolicy starts building the redaction policy of SPEC §6 and returns
// a function that waits for it; the policy is nil with redaction off. What
// can refuse the run (an unreadable --redact-file, a bad --redact-pattern)
// is checked before it returns; compiling the catalogue (about half a
// millisecond) then overlaps with starting the command (see sink).
func startPolicy(r Redaction, environ []string) (func() (*redact.Policy, error), error) {
	if r.Off {
		return func() (*redact.Policy, error) { return nil, nil }, nil
	}
	var values []string
	left := int64(maxRedactFileBytes)
	for _, f := range r.Files {
		b, err := readBounded(f, left)
		if err != nil {
			return nil, fmt.Errorf("cannot read --redact-file %s: %v", f, store.UnwrapPath(err))
		}
		if int64(len(b)) > left {
			return nil, hintedError{
				err:  fmt.Errorf("--redact-file %s: more than %d KiB (%s bytes), all --redact-file files together", f, maxRedactFileBytes>>10, text.Commas(maxRedactFileBytes)),
				hint: "mask fewer values, or match their shape with --redact-pattern REGEX (capwrap help redact-file)",
			}
		}
		left -= int64(len(b))
		for _, line := range strings.Split(string(b), "\n") {
			if v := strings.TrimRight(line, "\r"); v != "" {
				values = append(values, v)
			}
		}
	}
	if err := redact.CheckPatterns(r.Patterns); err != nil {
		return nil, err
	}
	var p *redact.Policy
	var perr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		p, perr = redact.NewPolicy(redact.Options{
			Environ:  environ,
			EnvNames: r.EnvNames,
			AllowEnv: r.AllowEnv,
			Values:   values,
			Patterns: r.Patterns,
		})
	}()
	return func() (*redact.Policy, error) {
		<-done
		return p, perr
	}, nil
}
