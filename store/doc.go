// Package store owns capwrap's on-disk state (SPEC §4, §7, §8): the
// tool-outputs directory, one capture directory per run, the stream files
// that grow while a child runs, the receipts published when it ends, the
// per-capture and per-directory limits, and the locks that tell a running
// capture from an abandoned one.
//
// store knows nothing of processes, pipes, terminals or redaction. It is
// handed bytes (already sanitized), names, times and [Receipt] values, and it
// promises three things about them:
//
//   - a write to a [StreamWriter] never blocks the caller for longer than the
//     stall timeout and never fails: a capture that cannot persist stops
//     persisting and says why (capture_limit, directory_quota, writer_stalled,
//     write_error), while the caller keeps draining;
//   - every directory and file it makes is created exclusively, 0700 or 0600
//     whatever the umask, through an [os.Root] of the tool-outputs directory;
//     a symbolic link or hard link planted at a name it uses is refused (or,
//     for receipt.live.json, replaced by rename), never followed;
//   - a crash at any moment leaves .live files holding every committed byte
//     and no receipt.json, which [Dir.List] reports as abandoned; or, when
//     the directory holds [KilledNote] (which capwrap's watchdog, not the
//     store, writes as it ends the command of a capwrap that died), as
//     killed with capwrap.
//
// # Reading back
//
// [OpenExisting] opens a directory for the verbs of SPEC §8 without
// changing it: [Dir.List] and [Dir.Entry] describe captures,
// [Dir.OpenStream] and [Dir.OpenArrival] give their files to package
// readback (byte and line ranges, grep, follow, the interleaved order), and
// [Dir.Remove] is the one deletion. Flags, usage errors and hints stay
// with the CLI.
//
// The verbs' only writes in a capture directory are its consumers' state
// (cursor.go): [Dir.LockCursor] and [Cursor.Set] keep each consumer's
// read position per stream (`read --new`), and [Dir.MarkNotified]
// records that a capture's end was reported to a consumer (`wait
// --notify`); both atomic, 0600, through an os.Root of the capture
// directory, never following a symbolic link.
//
// [WriteReceiptFile] is the one write outside the directory: a receipt
// for --receipt-file, published atomically over a regular file (or a new
// name) through a random temporary name, or streamed to a FIFO or
// character device, never replacing anything else.
//
// # Limits and faults
//
// What each one does to the capture; the caller copies Result into the
// receipt's "capture" object (SPEC §7). Draining goes on in every case and
// the first reason wins, except that write_error replaces capture_limit.
//
//	MaxCaptureBytes reached   bytes up to the limit (both streams together) are kept, the
//	                          rest discarded: partial, capture_limit, error null
//	DirQuota reached          bytes covered by a reservation are kept, nothing old is
//	                          deleted: partial, directory_quota, error null
//	writer stuck (no progress partial, writer_stalled, error null; a write that never
//	for StallTimeout)         returned leaves its stream's sha256 "" and its file open
//	ENOSPC, EFBIG, EIO        partial, write_error, error "write <file>: <cause>";
//	                          committed counts the bytes of a short write
//	fsync or close fails      partial, write_error, error "fsync <file>: <cause>"
//	SIGKILL of the process    .live files hold every committed byte, no receipt.json,
//	                          lock free: Dir.List reports Abandoned; with the watchdog's
//	                          note (KilledNote) also KilledWithCapwrap
//
// # SIGXFSZ
//
// A write past `ulimit -f` raises SIGXFSZ. The Go runtime installs its own
// handler for SIGXFSZ and, unless the program asked for the signal with
// os/signal, ignores it there, so the write fails with EFBIG and store records
// write_error. Callers must not use signal.Ignore(syscall.SIGXFSZ): an ignored
// disposition (SIG_IGN) is inherited across exec by the child, whereas a
// handled one is reset to the default. signal.Notify with a drained channel is
// harmless too. TestMain in this package checks the survival path with a
// helper process under `ulimit -f`.
package store
