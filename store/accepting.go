package store

// Accepting reports whether [StreamWriter.Write] still keeps bytes: false
// once persistence has stopped or the capture has reached
// Limits.MaxCaptureBytes, the directory quota (Limits.DirQuota), a stalled
// writer or a write error; the reason is in the [Result] of
// [Capture.Drain] or [Capture.Finalize]. Bytes written from then on are
// discarded. A runner asks it to learn that nothing more of a stream can
// be kept (issue 26: a command whose reader has gone is then told so).
func (c *Capture) Accepting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.accepting && !c.stopped
}
