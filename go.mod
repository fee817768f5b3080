module github.com/capwrap/capwrap

go 1.26.0

require (
	github.com/creack/pty v1.1.24
	github.com/fatih/color v1.19.0
	github.com/mattn/go-isatty v0.0.24
	github.com/rogpeppe/go-internal v1.16.0
	github.com/spf13/pflag v1.1.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/mattn/go-colorable v0.1.14 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
