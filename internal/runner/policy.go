package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
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

// lazyPolicy is the run's redaction policy (SPEC §6), compiled when the run
// first needs it (get) rather than at every start: at the first byte of
// either stream (sink.init), for the live receipt's label
// (writeLiveReceipt), and, once the command has ended, for a start error or
// a descendant's command line to sanitize, or for a label that a receipt
// will carry (settle, labelled). A command that prints nothing, ends before
// the live receipt is due and whose capture is not kept (a compact success
// in preview mode, SPEC §7: the footer has no label) compiles none:
// compiling is about 1.1 ms of CPU, 1.2 MB and 250 page faults, nearly all
// of it the built-in catalogue's automaton (issue 28).
//
// Compiling starts strictly when first needed, not ahead of the need in
// the background once the command runs. Measured (perf stat, interleaved,
// against builds that started it in a goroutine at the spawn, or 5 ms
// after it): a start at the spawn gave "capwrap -- true" back the
// compile's page faults (720 to 850 against 500 to 550); one 5 ms after
// it did the same whenever a busy machine made the command take longer;
// and neither made "capwrap -- sh -c 'echo hi'" measurably faster, in CPU,
// page faults or wall time: the first byte waits for the compile once,
// which the spawn shared two cores with before. Whatever needs the policy
// waits for it: no byte reaches a file, the preview or the terminal
// (--tee, a pty) unredacted.
type lazyPolicy struct {
	opt  *redact.Options // nil with redaction off
	once sync.Once
	p    *redact.Policy
	err  error
}

// policiesCompiled counts the policies compiled in this process (tests:
// a run that needs none compiles none).
var policiesCompiled atomic.Int64

// newLazyPolicy checks what can refuse the run before the command starts
// (an unreadable or too large --redact-file, a bad --redact-pattern: SPEC
// §3, exit 125) and returns the policy, to be compiled when first needed.
// Redaction off, its policy is nil.
func newLazyPolicy(r Redaction, environ []string) (*lazyPolicy, error) {
	if r.Off {
		return &lazyPolicy{}, nil
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
	return &lazyPolicy{opt: &redact.Options{
		Environ:  environ,
		EnvNames: r.EnvNames,
		AllowEnv: r.AllowEnv,
		Values:   values,
		Patterns: r.Patterns,
	}}, nil
}

// get returns the policy, compiling it on the first call; a concurrent
// call waits for that compile. The policy is nil with redaction off. The
// error, the same on every call, is not expected: CheckPatterns has
// passed, and NewPolicy fails for no other reason.
func (l *lazyPolicy) get() (*redact.Policy, error) {
	l.once.Do(func() {
		if l.opt != nil {
			policiesCompiled.Add(1)
			l.p, l.err = redact.NewPolicy(*l.opt)
		}
	})
	return l.p, l.err
}
