//go:build !linux

package wrap

// growPipe does nothing: macOS and FreeBSD have no knob for a pipe's
// capacity (their pipes grow on their own, up to 64 KiB on macOS, and to
// the kernel's big-pipe size on FreeBSD).
func growPipe(fd uintptr, n int) {}
