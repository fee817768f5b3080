// Command smallwrites writes 1,000,000 lines of 20 bytes to stdout, one
// write(2) each: the "many small writes" case of capwrap's benchmark.
package main

import (
	"fmt"
	"os"
	"syscall"
)

func main() {
	line := []byte("line 0000000 of 1M.\n")
	for i := 0; i < 1_000_000; i++ {
		copy(line[5:12], fmt.Sprintf("%07d", i))
		if _, err := syscall.Write(1, line); err != nil {
			os.Exit(1)
		}
	}
}
