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
//   - every name it creates is created exclusively, 0700 or 0600 whatever the
//     umask, without following symbolic links, through an [os.Root] of the
//     tool-outputs directory;
//   - a crash at any moment leaves .live files holding every committed byte
//     and no receipt.json, which [Dir.List] reports as abandoned.
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
