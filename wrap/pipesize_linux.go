package wrap

import "golang.org/x/sys/unix"

// growPipe asks for a pipe of n bytes (F_SETPIPE_SZ, up to
// /proc/sys/fs/pipe-max-size); a refusal is ignored: the pipe keeps its
// 64 KiB.
func growPipe(fd uintptr, n int) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, n) }
