package match

// Staging (issue 27, the two-stream race): a read of one stream and what
// the other stream holds at that moment are both scanned before either is
// released, so that a value one of them reveals is masked in the other even
// when capwrap happened to read the bare occurrence first. Stage is the
// first half (decide and remember), Commit the second (release).

// stage runs p through the matcher as write does, deciding spans and
// remembering their values (published to the Memory at once), but
// releases nothing: the buffer holds all of p until commit.
func (s *stream) stage(p []byte) int {
	done := 0
	for len(p) > 0 && s.err == nil {
		n := min(len(p), chunkSize)
		s.feed(p[:n])
		s.evalCands()
		s.scanLits()
		s.growOpen()
		s.frontier() // commits and publishes the values decided so far
		p = p[n:]
		done += n
	}
	return done
}

// Stage is Write without the release: it decides what b's bytes can
// decide and remembers the values found (sharing them through the Memory
// at once), but writes nothing to the destination until Commit, so that
// the values another Writer sharing the Memory learns from its own Stage
// in the meantime are masked in b too. The Writer holds all of b until
// then (a Write holds at most the holdback). It returns len(b), or after
// Close ErrClosed, or the destination's earlier error.
func (w *Writer) Stage(b []byte) (int, error) {
	if w.closed {
		return 0, ErrClosed
	}
	if w.s.err != nil {
		return 0, w.s.err
	}
	return w.s.stage(b), nil
}

// Commit releases what the Stages since the last Write or Commit decided,
// after taking up the values the other Writers sharing the Memory have
// found since: it is Write(nil). It returns the destination's error, if
// any (sticky, as for Write); after Close, ErrClosed.
func (w *Writer) Commit() error {
	if w.closed {
		return ErrClosed
	}
	if w.s.err != nil {
		return w.s.err
	}
	w.s.settle()
	w.replaced.Store(w.s.replaced)
	w.decided.Store(min(w.s.rel, w.s.pos))
	return w.s.err
}
