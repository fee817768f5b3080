package runner

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/capwrap/capwrap/redact"
	"github.com/capwrap/capwrap/store"
)

// sink is one stream's entry stage: the redactor, or a pass-through when
// redaction is off, in front of dst. The redaction policy may still be
// compiling when the command starts; the first Write (or Close) waits for
// it, so compiling overlaps with the spawn. Should the policy fail, the sink
// writes nothing (fail closed) and the run reports the error.
type sink struct {
	dst   io.Writer
	ready func() (*redact.Policy, error)
	once  sync.Once
	w     io.Writer      // dst, the redactor or io.Discard; set by init
	r     *redact.Writer // the redactor, nil without one
}

func (s *sink) init() {
	s.once.Do(func() {
		policy, err := s.ready()
		switch {
		case err != nil:
			s.w = io.Discard
		case policy == nil:
			s.w = s.dst
		default:
			s.r = policy.NewWriter(s.dst)
			s.w = s.r
		}
	})
}

// Write passes p through the redactor, once the policy is ready.
func (s *sink) Write(p []byte) (int, error) {
	s.init()
	return s.w.Write(p)
}

// Close releases what the redactor holds back.
func (s *sink) Close() error {
	s.init()
	if s.r != nil {
		return s.r.Close()
	}
	return nil
}

// replaced is the number of redactions made in this stream.
func (s *sink) replaced() int64 {
	if s.r == nil {
		return 0
	}
	return s.r.Replaced()
}

// seen are the secrets this stream's redactor masked (nil without one).
func (s *sink) seen() [][]byte {
	if s.r == nil {
		return nil
	}
	return s.r.Seen()
}

// liveWriter copies a stream to capwrap's own stdout or stderr in tee mode.
// After the first error (EPIPE: the reader went away) it stops writing there
// and reports success, so the capture goes on (SPEC §2).
type liveWriter struct {
	mu      sync.Mutex
	w       io.Writer
	err     error
	midLine bool // the last byte written was not a newline
}

func (l *liveWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil && len(p) > 0 {
		_, l.err = l.w.Write(p)
		l.midLine = p[len(p)-1] != '\n'
	}
	return len(p), nil
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
	for _, f := range r.Files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("cannot read --redact-file %s: %v", f, store.UnwrapPath(err))
		}
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
			Values:   values,
			Patterns: r.Patterns,
		})
	}()
	return func() (*redact.Policy, error) {
		<-done
		return p, perr
	}, nil
}
