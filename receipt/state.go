package receipt

// ProcessState is the receipt's process.state (SPEC §7), and the state
// `capwrap list` shows for a capture whose outcome nobody recorded.
type ProcessState string

// The process states of SPEC §7.
const (
	ProcessRunning    ProcessState = "running"
	ProcessExited     ProcessState = "exited"
	ProcessSignaled   ProcessState = "signaled"
	ProcessTimeout    ProcessState = "timeout"
	ProcessCancelled  ProcessState = "cancelled"
	ProcessNotStarted ProcessState = "not_started"

	ProcessUnknown ProcessState = "unknown" // list: the capture's writer died before it knew (abandoned), or no receipt
)

// CaptureState is the receipt's capture.state (SPEC §7), and the states
// `capwrap list` shows besides (SPEC §8): a capture still being written,
// and one whose receipt could not be read.
type CaptureState string

// The capture states of SPEC §7, and of `capwrap list`.
const (
	CapturePending  CaptureState = "pending"
	CaptureComplete CaptureState = "complete"
	CapturePartial  CaptureState = "partial"
	CaptureFailed   CaptureState = "failed"
	CaptureDisabled CaptureState = "disabled"

	CaptureRunning CaptureState = "running" // list: the capture's writer holds its lock
	CaptureUnknown CaptureState = "unknown" // list: no receipt says (unreadable)
)

// Reason is the receipt's capture.reason: why a capture is partial or
// failed (SPEC §7).
type Reason string

// The capture reasons of SPEC §7.
const (
	ReasonDrainTimeout   Reason = "drain_timeout"
	ReasonCaptureLimit   Reason = "capture_limit"
	ReasonDirectoryQuota Reason = "directory_quota"
	ReasonWriterStalled  Reason = "writer_stalled"
	ReasonWriteError     Reason = "write_error"
	// ReasonDiskFull is a write error of the file system's own: it is
	// full (ENOSPC) or the user's disk quota on it is (EDQUOT). The bytes
	// written before are kept; the receipt is still published, in space
	// set aside when the capture was made (issue 26).
	ReasonDiskFull  Reason = "disk_full"
	ReasonAbandoned Reason = "abandoned"
	// ReasonKilledWithCapwrap is an abandoned capture whose command
	// capwrap's watchdog ended (SPEC §3: a command never outlives a
	// capwrap that was killed): capwrap was killed, the command with it.
	ReasonKilledWithCapwrap Reason = "killed_with_capwrap"

	// ReasonExportedRunning marks the receipt that `capwrap export`
	// (SPEC §8) writes for a capture still running when it was exported:
	// the export holds the bytes committed then, and the command went on.
	ReasonExportedRunning Reason = "exported_running"
)
