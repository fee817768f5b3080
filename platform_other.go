//go:build !unix

package main

// capwrap needs process groups, POSIX signals, pseudo-terminals and
// flock: it builds for Linux, macOS and FreeBSD (SPEC §11), not for this
// system. The line below is the error a build here ends with.
var _ = capwrap_builds_for_linux_darwin_and_freebsd_only
