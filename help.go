package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

const shortHelp = `capwrap runs a command, keeps a sanitized copy of its output, and prints a
bounded preview and a one-line receipt.

usage:
  capwrap [flags] -- COMMAND [ARG...]
  capwrap list [--json] | show ID | read ID [flags] | prune [flags]
  capwrap help FLAG-or-VERB

Without a terminal (agents, CI, $(...)) capwrap prints, after the command
ends, a head and tail of stdout and stderr and a last line
"capwrap-receipt {JSON}". On a terminal it streams the output live like tee
and ends with a one-line summary on stderr. Either way stdout and stderr are
kept in tool-outputs/ID/ (credentials masked) and capwrap exits with the
command's status: its code; its signal re-raised; 124 timeout; 125 capwrap
could not start; 126 not executable; 127 not found.

most used flags:
%s
examples:
  agent:     capwrap -- pytest -x                 # preview + receipt, files kept on failure
             capwrap read ID --lines -50:         # then the part it needs
  CI:        CAPWRAP_DIR=$PWD/ci-logs capwrap --keep always -- make test
  terminal:  capwrap make -j4                     # live output, summary, files kept

All flags: capwrap help flags. Verbs: capwrap help list|show|read|prune.
Every flag has a CAPWRAP_* variable: --dir-quota is CAPWRAP_DIR_QUOTA.
`

// mostUsed are the flags --help shows; "capwrap help flags" shows all.
var mostUsed = []string{"dir", "keep", "timeout", "tee", "preview", "quiet", "pty", "no-redact", "redact-env", "max-capture-bytes"}

// printHelp writes --help, or the detail of one topic (a flag or a verb)
// for "capwrap help TOPIC". It returns false for an unknown topic.
func printHelp(w io.Writer, topic string) bool {
	var o options
	fs := newFlagSet(&o)
	switch topic {
	case "":
		sub := pflag.NewFlagSet("", pflag.ContinueOnError)
		for _, n := range mostUsed {
			sub.AddFlag(fs.Lookup(n))
		}
		sub.SortFlags = false
		fmt.Fprintf(w, shortHelp, sub.FlagUsagesWrapped(80))
		return true
	case "flags":
		fmt.Fprintf(w, "capwrap [flags] -- COMMAND [ARG...]\n\nflags (each also as CAPWRAP_<NAME>):\n%s", fs.FlagUsagesWrapped(80))
		return true
	}
	if text, ok := verbHelp[topic]; ok {
		fmt.Fprint(w, text)
		return true
	}
	f := fs.Lookup(strings.TrimLeft(topic, "-"))
	if f == nil || f.Name == "help" {
		return false
	}
	fmt.Fprintf(w, "--%s", f.Name)
	if t := f.Value.Type(); t != "bool" {
		fmt.Fprintf(w, " %s", strings.ToUpper(t))
	}
	fmt.Fprintf(w, "\n  %s", f.Usage)
	if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && f.DefValue != "0" {
		fmt.Fprintf(w, " (default %s)", f.DefValue)
	}
	fmt.Fprintln(w)
	if f.Name != "version" {
		fmt.Fprintf(w, "  variable: %s\n", envName(f.Name))
	}
	if more, ok := flagDetail[f.Name]; ok {
		fmt.Fprintf(w, "\n%s", more)
	}
	return true
}

// flagDetail is the longer explanation "capwrap help FLAG" adds.
var flagDetail = map[string]string{
	"dir": `The tool-outputs directory: --dir, else $CAPWRAP_DIR, else ./tool-outputs.
When neither flag nor variable chose it and ./tool-outputs cannot be used,
capwrap falls back to ${XDG_STATE_HOME:-$HOME/.local/state}/capwrap/tool-outputs
with a warning. A directory that is a symlink or not a directory is refused.
`,
	"keep": `auto: a capture whose preview showed every byte and whose command exited 0
leaves nothing on disk; every other capture is kept. always: keep every
capture. never: keep none (the receipt still reports sizes).
`,
	"timeout": `On expiry SIGTERM goes to the command's process group, SIGKILL after
--kill-after, and capwrap exits 124; the receipt still records the command's
own code or signal. Durations use Go syntax: 500ms, 10s, 2m.
`,
	"drain-timeout": `After the command exits, a background descendant may still hold its
output open. capwrap waits this long for end of output, then finishes the
capture as partial (reason drain_timeout). Descendants are not killed.
`,
	"pty": `auto (default): on in tee mode, off otherwise. With a pty the command's
stdout and stderr are each a pseudo-terminal of its own, so programs that
buffer or drop colour when piped behave as on a terminal, while the two
streams stay separate and byte-exact (raw mode). The ptys are not the
command's controlling terminal: /dev/tty still reaches you.
`,
	"no-redact": `Redaction masks values of environment variables whose names look secret,
well-known credential shapes and --redact-pattern matches in the files and
every view, as [REDACTED:kind]. --no-redact turns it off; the receipt says so.
`,
}

// verbHelp is "capwrap help VERB".
var verbHelp = map[string]string{
	"list": `capwrap list [--json]
  The captures in the tool-outputs directory, newest first: ID, process state
  and exit, capture state (abandoned ones marked), sizes, age, command.
`,
	"show": `capwrap show ID
  The receipt as pretty JSON; for a running capture the live receipt plus the
  sizes committed so far. ID may be any unique prefix.
`,
	"read": `capwrap read ID [--stream stdout|stderr] [--offset N] [--limit N]
                [--lines A:B] [--grep REGEX [--max N]] [--follow] [--interleaved]
  Bounded reads of a capture's stream: by byte range, by line range (1-based,
  inclusive; negative counts from the end: --lines -50: is the last 50 lines)
  or by regular expression. Output never exceeds --limit (default 64K); the
  next offset and whether the stream is final go to stderr. --interleaved
  merges stdout and stderr in the order capwrap received them, chunk by chunk
  (the order of arrival at capwrap, not the order the command wrote them).
`,
	"prune": `capwrap prune --older-than DURATION | --id ID [--dry-run]
  Deletes captures: the only verb that deletes. A running capture is never
  touched.
`,
	"help": `capwrap help [FLAG-or-VERB]
  Detail on one flag (capwrap help timeout) or verb (capwrap help read);
  capwrap help flags lists every flag.
`,
}
