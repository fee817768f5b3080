package wrap

import "errors"

// ErrCloseStream, returned by the writer of a stream (Config.Stdout,
// Config.Stderr), asks Run to stop reading that stream and close capwrap's
// end of it at once: the command then meets the end of its pipe as it
// would writing into a pipeline whose reader has gone (SIGPIPE, or EPIPE
// where it ignores that), and what it writes there afterwards is lost. The
// stream counts neither as ended nor as cut at the drain deadline. The
// caller decides when (issue 26: its own reader gone, nothing more of the
// stream can be kept); Run's other writer errors are ignored.
var ErrCloseStream = errors.New("close the stream: nothing more of it can be used")

// closeEarly closes capwrap's end of the stream for ErrCloseStream: the
// pump's next Read fails and it returns.
func (s *stream) closeEarly() {
	s.closed.Store(true)
	_ = s.r.Close()
}
