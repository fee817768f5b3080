package store

import "golang.org/x/sys/unix"

// mapSlab returns n bytes of anonymous memory outside the Go heap, asked to
// be backed by transparent huge pages (madvise(MADV_HUGEPAGE): one fault
// and one clearing per 2 MiB instead of 512 faults of 4 KiB), or nil if
// the mapping fails. Pages are only committed as they are first touched.
func mapSlab(n int) []byte {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // refused (THP off): 4 KiB pages
	return b
}

// unmapSlab returns a slab of mapSlab to the system; nothing may use it
// afterwards.
func unmapSlab(b []byte) { _ = unix.Munmap(b) }
