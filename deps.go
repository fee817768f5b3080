//go:build tools

package main

import (
	_ "github.com/creack/pty"
	_ "github.com/fatih/color"
	_ "github.com/mattn/go-isatty"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/spf13/pflag"
	_ "golang.org/x/sys/unix"
)
