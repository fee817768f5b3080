package main

import (
	"os"
)

// runVerb runs a secondary verb (SPEC §8). Usage errors of verbs exit 2.
func runVerb(name string, args []string, o *options, stdout, stderr *os.File) int {
	d := diag{stderr}
	switch name {
	case "help":
		topic := ""
		if len(args) > 0 {
			topic = args[0]
		}
		if !printHelp(stdout, topic) {
			d.errorf("no help on %q", topic)
			d.hintf("capwrap help flags lists the flags; verbs are list, show, read, prune")
			return 2
		}
		return 0
	}
	d.errorf("%s is not implemented yet", name)
	return 2
}
