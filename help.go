//go:build unix

package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/pflag"
)

// runUsage is the usage of a run, the first line of --help's.
const runUsage = "capwrap [flags] -- COMMAND [ARG...]"

// shortHelp is --help, with %s for the most used flags.
const shortHelp = `capwrap runs a command, keeps a sanitized copy of its output, and prints a
bounded preview and a one-line receipt.

usage:
  ` + runUsage + `
  capwrap [flags] -c 'SHELL COMMAND LINE' [ARG0 [ARG...]]
  capwrap --background | --background-after DURATION [flags] -- COMMAND [ARG...]
  capwrap list [--json] [--running] [--limit N] | show ID | read ID [flags] | prune [flags]
  capwrap export ID... --to DIR|FILE.tar.gz
  capwrap wait [--timeout D] [--raise] ID... | stop [--signal SIG] [--kill-after D] [--raise] ID...
  capwrap help [FLAG-or-VERB]

With no person at a terminal (agents, CI) capwrap prints, after the command
ends, a head and tail of stdout and stderr and a last line
"capwrap-receipt {JSON}" (--preview forces this: for a harness whose shell
runs in a pty). At a terminal, also when piped (capwrap make | grep x), it
streams the output live like tee and ends with a one-line summary on stderr.
Either way stdout and stderr are kept in tool-outputs/ID/ (credentials
masked) and capwrap exits with the command's status: its code; its signal
re-raised; 124 timeout; 125 capwrap could not start; 126 not executable; 127
not found; 75 still running, handed back as a background job.

most used flags:
%s
examples:
  agent:     capwrap -- pytest -x                 # preview + receipt, files kept on failure
             capwrap read ID --lines -50:         # then the part it needs
             capwrap -c 'cd web && npm test'      # shell syntax: cd, &&, pipes, VAR=x
  server:    capwrap --background --pty always -- python3 -m http.server 8000
             capwrap read ID --follow --until 'Serving HTTP' --timeout 30s
             capwrap stop ID
  build:     capwrap --background-after 100s -- make test  # 75: running; capwrap wait ID
  CI:        capwrap --tee --receipt-file receipt.json -- make test
  terminal:  capwrap make -j4                     # live output, summary, files kept

All flags: capwrap help flags. Verbs: capwrap help list|show|read|export|prune|wait|stop.
Every flag but -c has a variable: --dir-quota 1G is CAPWRAP_DIR_QUOTA=1G; a
flag beats its variable. Manual: man capwrap.
`

// runHelp is `capwrap help [TOPIC]`: --help, or the detail of one topic
// (printHelp). -h and --help are the help verb's own.
func runHelp(e *env, args []string) error {
	topic := ""
	if len(args) > 0 {
		topic = args[0]
	}
	if topic == "-h" || topic == "--help" {
		topic = "help"
	}
	if !printHelp(e.stdout, topic) {
		return usageError{fmt.Sprintf("no help on %q", topic), "capwrap help flags lists the flags; verbs are list, show, read, export, prune, wait, stop"}
	}
	return nil
}

// mostUsed are the flags --help shows; "capwrap help flags" shows all.
var mostUsed = []string{"command", "dir", "keep", "timeout", "background", "background-after", "tee", "preview", "quiet", "pty", "color", "no-redact", "redact-env", "max-capture-bytes"}

// metavar names the argument of each flag that takes one, in --help and
// in the man page.
var metavar = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"dir": "DIR", "keep": "WHEN", "receipt-file": "PATH", "events": "PATH", "background-after": "DURATION", "timeout": "DURATION",
		"kill-after": "DURATION", "drain-timeout": "DURATION", "stall-timeout": "DURATION", "notice-after": "DURATION",
		"stdout-chars": "N", "stderr-chars": "N", "preview-bytes": "SIZE",
		"max-capture-bytes": "SIZE", "dir-quota": "SIZE", "queue-bytes": "SIZE",
		"redact-env": "NAME", "redact-allow-env": "NAME", "redact-file": "FILE", "redact-pattern": "REGEX",
		"pty": "WHEN", "color": "WHEN", "command": "STRING",
	}
})

// flagSynopsis is "--timeout DURATION" (or "-h, --help").
func flagSynopsis(f *pflag.Flag) string {
	s := "--" + f.Name
	if f.Shorthand != "" {
		s = "-" + f.Shorthand + ", " + s
	}
	if m := metavar()[f.Name]; m != "" {
		s += " " + m
	}
	return s
}

// flagDefault is a flag's default as a user would write it ("" when it
// has none worth saying): 32M rather than 33554432.
func flagDefault(f *pflag.Flag) string {
	switch f.DefValue {
	case "", "false", "[]", "0", "0s":
		return ""
	}
	if f.Value.Type() == "size" {
		n, _ := parseSize(f.DefValue)
		return humanSize(n)
	}
	return f.DefValue
}

// flagUsages lists flags one to a paragraph: synopsis, then the usage with
// its default and, when withEnv, its variable.
func flagUsages(fs *pflag.FlagSet, names []string, withEnv bool) string {
	var b strings.Builder
	for _, n := range names {
		f := fs.Lookup(n)
		line := "  " + flagSynopsis(f)
		text := f.Usage
		if d := flagDefault(f); d != "" {
			text += " (default " + d + ")"
		}
		if withEnv && !noVariable(n) {
			text += "; " + envName(n)
		}
		if len(line) < 26 {
			line += strings.Repeat(" ", 26-len(line)) + text
		} else {
			line += "\n" + strings.Repeat(" ", 26) + text
		}
		b.WriteString(wrapText(line, 80, 26) + "\n")
	}
	return b.String()
}

// wrapText breaks a line at spaces so that no line is longer than width
// (unless one word is), indenting continuation lines by indent spaces.
func wrapText(s string, width, indent int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for len(line) > width {
			cut := strings.LastIndex(line[:width+1], " ")
			if cut <= indent {
				break
			}
			out = append(out, line[:cut])
			line = strings.Repeat(" ", indent) + strings.TrimLeft(line[cut:], " ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// allFlags are the names of every flag, in declaration order.
func allFlags(fs *pflag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
}

// printHelp writes --help, or the detail of one topic (a flag, a verb,
// "flags" or "env") for "capwrap help TOPIC". It returns false for an
// unknown topic.
func printHelp(w io.Writer, topic string) bool {
	var o options
	fs := newFlagSet(&o)
	switch topic {
	case "":
		fmt.Fprintf(w, shortHelp, flagUsages(fs, mostUsed, false))
		return true
	case "flags":
		fmt.Fprintf(w, "%s\n\nflags, each with its variable (a flag beats its variable):\n%s", runUsage, flagUsages(fs, allFlags(fs), true))
		return true
	case "env", "environment":
		fmt.Fprint(w, "Every flag but --help, --version and -c has a variable; a flag beats its\nvariable, an empty variable counts as unset.\n\n")
		for _, n := range allFlags(fs) {
			if !noVariable(n) {
				fmt.Fprintf(w, "  %-28s %s\n", envName(n), flagSynopsis(fs.Lookup(n)))
			}
		}
		fmt.Fprint(w, "\nAlso read: NO_COLOR and TERM=dumb (no colour with --color auto),\nXDG_STATE_HOME and HOME (the fallback tool-outputs directory).\n")
		return true
	}
	if text, ok := verbHelp()[topic]; ok {
		fmt.Fprint(w, text)
		if g := verbGlobals()[topic]; len(g) > 0 {
			var syn []string
			for _, n := range g {
				syn = append(syn, flagSynopsis(fs.Lookup(n)))
			}
			fmt.Fprintln(w, wrapText("  -h, --help prints this. Global flags it also takes after its name, as before it: "+strings.Join(syn, ", ")+".", 80, 2))
		}
		return true
	}
	f := fs.Lookup(strings.TrimLeft(topic, "-"))
	if f == nil || f.Name == "help" {
		return false
	}
	fmt.Fprintf(w, "%s\n  %s", flagSynopsis(f), f.Usage)
	if d := flagDefault(f); d != "" {
		fmt.Fprintf(w, " (default %s)", d)
	}
	fmt.Fprintln(w)
	if !noVariable(f.Name) {
		fmt.Fprintf(w, "  variable: %s\n", envName(f.Name))
	}
	if more, ok := flagDetail()[f.Name]; ok {
		fmt.Fprintf(w, "\n%s", more)
	}
	return true
}

// flagDetail is the longer explanation "capwrap help FLAG" adds.
var flagDetail = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"dir": `The tool-outputs directory: --dir, else $CAPWRAP_DIR, else ./tool-outputs.
When neither flag nor variable chose it and ./tool-outputs cannot be used,
capwrap falls back to ${XDG_STATE_HOME:-$HOME/.local/state}/capwrap/tool-outputs
with a warning. A directory that is a symlink or not a directory is refused.
One that group or others can reach is used, with a warning once per mode
(remembered in its .warned-mode), not before every result.
`,
		"keep": `auto: a capture whose preview showed every byte as it is and whose command
exited 0 leaves nothing on disk; every other capture is kept, also one shown
whole but altered for display (carriage-return frames collapsed, ANSI
escapes removed, control bytes escaped): only its file holds the bytes as
they were. Only preview mode discards; tee and quiet modes keep. always:
keep every capture. never: keep none (the receipt still reports sizes).
`,
		"command": `For commands that need shell syntax: cd, &&, ||, pipes, redirections,
VAR=x cmd, globs. capwrap -c 'cd web && npm test' runs
$SHELL -c 'cd web && npm test' when $SHELL is an absolute path to sh, bash,
zsh, dash or ksh, else /bin/sh; words after STRING become its $0, $1...
(capwrap -c 'echo "$1"' sh hello). Without -c, a command name that only a
shell knows (cd, source, export, if, FOO=1) is not found (127) and capwrap
hints at -c. The cd happens in the child: it cannot change the directory of
the shell that runs capwrap. -c has no variable on purpose: a command line
taken from the environment would run in every capwrap that inherits it.
`,
		"preview": `Preview mode is the default when no person is at a terminal: stdout is not
a terminal, and stdin and stderr are not both terminals. An agent harness
whose shell runs in a pseudo-terminal looks like a person at the keyboard;
it sets CAPWRAP_PREVIEW=1 to get the preview and the receipt line. With
the default budgets everything printed is at most 10,000 characters.
`,
		"receipt-file": `A new name or a regular file is replaced atomically: the receipt goes to a
temporary file with a random name in the same directory (created
exclusively, 0600), is fsynced and renamed over PATH. A FIFO or character
device (/dev/null, a terminal) is written to and never replaced; a FIFO
nobody reads is an error at once. A symbolic link is followed (/dev/stderr,
/dev/fd/3). A directory or other kind of file is refused. A failure is a
warning: the exit status stays the command's unless --strict.
`,
		"events": `Writes the preview's live updates while the command runs, one JSON object
per line (SPEC §12), in every mode, to PATH: a file (created or truncated,
0600), a FIFO (opened when its reader opens it), or fd:N (a descriptor the
caller opened, written through a duplicate; not with --background). Given
here, it makes a capwrap under a capwrap capture rather than pass its
command through (SPEC §1). Each stream's view is its last
--stdout-chars / --stderr-chars characters of display text:
  {"kind":"replace","stream":"stdout","text":"...","meta":{...}}  the whole view
  {"kind":"append","stream":"stdout","text":"...","meta":{...}}   text added
  {"kind":"slide","stream":"stdout","drop":N,"text":"...","meta":{...}}
                        N characters dropped from the start, text added
  {"kind":"metadata","stream":"stdout","meta":{...}}              totals moved
  {"kind":"final","schema":"capwrap.receipt/v1",...}              the receipt, last
meta: bytes, lines, shown_bytes, shown_lines, omitted_bytes, omitted_lines,
capture. Updates are paced: the first change after a pause at once, then
no sooner than max(100ms, bytes/102400 s) after the last, changes
collapsing into the latest state. Folded in order, each stream's view ends
as its section of the final preview. A slow or absent reader never slows
the command; a reader that goes away ends the events, not the run.
`,
		"background": `The command runs as a job under a supervisor of its own (capwrap itself, in
a new session, holding none of the caller's descriptors): capwrap prints one
hint line on stderr and the launch receipt (process.state running, its pid),
and exits 0 once the command runs, like docker run -d. There is no daemon:
all state is in the capture directory, so capwrap list --running finds the
jobs, and capwrap read ID --follow [--until REGEX], capwrap wait ID and
capwrap stop ID reach them, from any shell. The job's command reads
/dev/null and has no controlling terminal. Its capture is always kept,
whatever --keep says; when the job ends, the
preview a foreground run would have printed is written to preview.txt,
which capwrap wait prints. --timeout, the limits and redaction apply in the
job as in a foreground run. Excludes --background-after.
`,
		"background-after": `A foreground run with a deadline for the tool call, not for the command:
a command that ends within DURATION is an ordinary run (its output, its
status, --keep as usual). One still running then is handed back: the preview
of what it committed so far, one line naming the capwrap wait, capwrap read
--follow and capwrap stop commands, and a footer with process.state running
and exit_status null; capwrap exits 75 (sysexits' EX_TEMPFAIL, "try again
later"), so capwrap --background-after 60s -- make test && deploy does not
deploy an unfinished build. The command goes on as a background job in the
same capture (same files, nothing duplicated or lost); see --background.
Set DURATION below your harness's own time limit. The command reads
/dev/null from the start. Signals capwrap receives before the hand-back go to
the command; should capwrap die before it (SIGKILL, a crash), the job is
stopped: SIGTERM, then SIGKILL --kill-after later. 0: never. Excludes
--background (a flag beats the other flag's variable).
`,
		"timeout": `On expiry SIGTERM goes to the command's process group and to every
descendant that left it (setsid; Linux and FreeBSD), SIGKILL after
--kill-after, and capwrap exits 124; the receipt still records the command's
own code or signal. Durations, for every flag that takes one (the verbs'
too): Go syntax (500ms, 10s, 2m, 1h30m) or days of 24 hours (7d, 1d12h, 2.5d).
`,
		"leave-descendants": `By default the processes the command started that are still alive once it
has ended and its output is drained (sleep 30 &, a daemon) are ended:
SIGTERM, then SIGKILL --kill-after later, since nothing capwrap started may
outlive it unseen. With this flag they are left running. Either way one
line on stderr names them (pid and command) and the receipt's descendants
object counts them.
`,
		"kill-after": `The grace period before SIGKILL: after a --timeout's SIGTERM, and after a
SIGINT, SIGTERM, SIGHUP or SIGQUIT that capwrap received and passed on to
the command's process group (as timeout -k). A group still alive this long
after gets SIGKILL; the receipt's process.reason says so.
`,
		"notice-after": `In preview mode, a command still running this long after its start (default
5s) first gets one line on stdout: "capwrap: still running after 5s, as
capture ID; should this call end first, capwrap wait ID waits for it and
capwrap read ID reads what it printed". A harness that kills capwrap at its
time limit, or moves the call to the background, still shows where the
output is. The preview that follows is shorter by that line. 0: never. Tee
and quiet modes, and --background, print no such line. With
--background-after it comes while capwrap waits, when it is shorter than
--background-after (else the hand-back, which names the job, comes first)
and never after the hand-back.
`,
		"drain-timeout": `After the command exits, a background descendant may still hold its
output open. capwrap waits this long for end of output, then finishes the
capture as partial (reason drain_timeout). Descendants are not killed.
It is about end of output only: everything the command wrote before it
exited is captured even with 0, and time spent writing to a slow disk
(--stall-timeout's business) does not count.
`,
		"pty": `auto (default): in tee mode, a stream of the command is a pseudo-terminal
only when capwrap's own stream is a terminal; one that goes to a pipe or a
file is a pipe, as without capwrap (capwrap X | Y gives Y what X | Y would;
--tee in CI starts no pager). Off in preview and quiet modes. With a pty,
programs that buffer or drop colour when piped behave as on a terminal,
while the two streams stay separate and byte-exact. The ptys are not the
command's controlling terminal: /dev/tty still reaches you. A pager that
reads its keys from its stderr's pty (older less, more) gets them: capwrap
copies the keyboard in. always gives both streams a pty wherever they go;
never gives pipes.
`,
		"redact-env": `Repeatable on the command line. Its variable, CAPWRAP_REDACT_ENV, holds
one name (as do CAPWRAP_REDACT_FILE and CAPWRAP_REDACT_PATTERN: one value
each, not a list); an empty name, or one with '=', white space or a comma,
is refused (exit 125). A value longer than 4,096 bytes is found by its
first 4,096: those and the bytes after them that continue it are masked.
`,
		"redact-allow-env": `Exempts the variable NAME, whose name looks secret but whose value is not
(PRIVATE_REGISTRY=registry.example.com), from the name test: its value is
printed. Repeatable on the command line; its variable,
CAPWRAP_REDACT_ALLOW_ENV, holds one name. A name also given to --redact-env
is masked all the same.
`,
		"redact-file": `Each line of FILE is a value to mask (a trailing CR dropped, empty lines
ignored), with its base64, URL-escaped and JSON-escaped forms. All
--redact-file files together may hold at most 16 KiB (16,384 bytes, line
ends included); more, or an endless file such as /dev/zero, is refused
before the command starts (exit 125). Past that, match the values' shape
with --redact-pattern. A value longer than 4,096 bytes is found by its first
4,096: those and the bytes after them that continue it are masked.
`,
		"color": `Colour applies to tee mode's summary line on stderr. auto: colour when
stderr is a terminal, NO_COLOR is unset or empty and TERM is not dumb.
always and never override all of that.
`,
		"no-redact": `Redaction masks values of environment variables whose names look secret,
well-known credential shapes and --redact-pattern matches in the files and
every view, as [REDACTED:kind]. --no-redact turns it off; the receipt says so.
`,
	}
})

// synopsis is a verb's usage on one line, for its usage errors: the
// lines of its help before the description, a second form (a line that
// starts with "capwrap " again) after a "|".
func synopsis(verb string) string {
	var words []string
	for _, line := range strings.Split(verbHelp()[verb], "\n") {
		if !strings.HasPrefix(line, "capwrap ") && !strings.HasPrefix(strings.TrimSpace(line), "[") {
			break
		}
		if len(words) > 0 && strings.HasPrefix(line, "capwrap ") {
			words = append(words, "|")
		}
		words = append(words, strings.Fields(line)...)
	}
	return strings.Join(words, " ")
}

// verbHelp is "capwrap help VERB": its synopsis (the verb's only usage
// lines), then what it does.
var verbHelp = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"list": `capwrap list [--json] [--running] [--limit N]
  The captures in the tool-outputs directory, newest first by start time
  (the receipt's started_at; the ID counts whole seconds only):
  ID, process state and exit, capture state (abandoned ones and those killed
  with capwrap marked), sizes, age, command. --running shows only the captures whose command still runs
  (background jobs among them: how a restarted harness finds its jobs);
  --limit N at most the N newest (0: all).
`,
		"show": `capwrap show ID
  The receipt as pretty JSON; for a running capture the live receipt plus the
  sizes committed so far; for an abandoned one (its capwrap died without a
  receipt) the live receipt marked partial (abandoned), process state
  unknown, or partial (killed_with_capwrap) when capwrap's watchdog noted
  that it ended the command as capwrap died. ID may be any unique prefix.
`,
		"read": `capwrap read ID [--stream stdout|stderr] [--offset N] [--limit N]
                [--lines A:B] [--grep REGEX [--max N] [-C N] [-A N] [-B N]]
                [--interleaved] [--follow [--timeout D] [--until REGEX]]
                [--new [--cursor NAME]]
  Bounded reads of a capture's stream (default stdout): by byte range
  (--offset, sizes like 64K accepted), by line range (--lines A:B, 1-based,
  inclusive; negative counts from the end: -50: is the last 50 lines, A: to
  the end, :B from the start) or by regular expression (--grep, printed as
  LINE:text, at most --max matches; as grep, -C/--context N prints N lines
  around each match, -A/--after-context N after, -B/--before-context N
  before, as LINE-text, with -- between groups that do not touch; 0 to
  10,000). Output never exceeds --limit (default 9000 bytes, which fits a
  10,000-character view; 64K with --follow); a page stops after its last
  whole line, or inside a longer line at a character boundary, and a hint
  gives the command that reads on from there. A matching line longer than
  1,000 bytes prints as windows, LINE@OFFSET:…match…. stderr ends
  with one line for programs:
    capwrap-read {"next_offset":N,"size":N}
  next_offset is where to go on with --offset. Keys at their usual values
  are left out: "stream" (stdout), "final" (true: the capture is finished),
  "running" and "truncated" (false). A running capture gives only the
  bytes committed so far (and says so). --follow waits for a running
  capture's new bytes until it is final (still at most --limit), until
  --timeout D has passed, or until a line of either stream matches --until
  REGEX (wait for a server's "listening on", which many print on stderr;
  a matching line on the stream not printed is quoted in a hint); the
  status line then adds "matched":true or "timed_out":true (the capture
  still runs: go on with --offset). A capture that ended first gets one
  error line with its exit status and the last lines of the other stream
  (a crash: the port was in use), and exit 1. --interleaved (also with
  --follow) prints stdout and stderr merged, each line labeled "stdout| "
  or "stderr| " ("+ " for the rest of a line the other stream cut):
  this is the order of arrival at capwrap,
  chunk by chunk, not an order the command guaranteed.
  --new prints what this consumer has not read yet, from its cursor (one
  per --cursor NAME, default "default", 1 to 64 of A-Z a-z 0-9 . _ -, and
  per stream: stdout, stderr or --interleaved), at most --limit as any
  read, and moves only that cursor to where the output stopped; it takes
  no --offset, --lines, --grep or --follow. The status line adds
  "cursor":"NAME" (not for default) and "nothing_new":true when there was
  nothing to print. Cursors live in the capture directory; two reads of
  one cursor at once never print the same bytes.
`,
		"export": `capwrap export ID... --to DIR|FILE.tar.gz
  Copies the captures (each ID any unique prefix) out of the tool-outputs
  directory, the only verb that does: their stream files, receipts, arrival
  index and a job's preview.txt, nothing else (no symbolic link followed,
  nothing from outside the directory), with manifest.json at the root
  (schema capwrap.export/v1: created_at, capwrap_version, per capture its
  id, state, files with size and sha256, and those unavailable: a stream
  file pruned, a receipt missing, a symbolic link refused). Receipts'
  paths are rewritten relative to the export: dir is the ID, each stream's
  file ID/stdout.log, abs_dir null. The export is a tool-outputs directory:
  capwrap --dir DIR list, show and read work on it as on the original. A
  running capture is exported with the bytes committed so far, its streams
  as .log files and a receipt.json partial (exported_running); an
  abandoned one as it is, still partial (abandoned). DIR is created 0700
  (or may exist empty); FILE.tar.gz (or .tgz) is created 0600 and holds
  everything under FILE/: tar xzf FILE.tar.gz, then capwrap --dir FILE
  list. A DIR that is not empty, or a file that exists, is refused (exit
  2): export never writes into or over anything. One line per capture and
  a total on stdout, a warning for each file unavailable.
`,
		"prune": `capwrap prune --older-than DURATION | --keep-last N | --id ID [--dry-run]
  Deletes captures: the only verb that deletes. --older-than counts from the
  end of a capture (an abandoned one's last write), in any duration: 12h,
  7d, 1d12h, 2.5d; --keep-last N keeps the N newest captures that are not
  running (by start time, as list shows them); --dry-run only lists. A
  running capture is never touched. Freed bytes return to --dir-quota. When
  the quota or the disk is full, the run's note names the --keep-last N
  that frees enough.
`,
		"wait": `capwrap wait [--timeout D] [--raise] ID...
capwrap wait --notify [--cursor NAME] [--timeout D] ID...
  Waits for each background job in turn to end and prints what a foreground
  run would have printed: its preview (preview.txt) and receipt line. Exits
  with the (last) job's status: 128+N for a job that signal N ended (143
  after SIGTERM), as a shell reports a killed child; the signal is not
  re-raised on wait, whose caller would take its own call for killed.
  --raise re-raises it instead, as a foreground run does.
  --timeout D (counted from the start of wait, for all the IDs): a job still
  running then is handed back as --background-after does (the preview so
  far, a line naming the commands, a footer with process.state running and
  exit_status null) and wait exits 75; 0 (default) waits for the end. Keep
  D below your harness's time limit and wait again on 75; the IDs after a
  job handed back are not shown. Several IDs share what one run prints
  (10,000 characters with the default budgets): each job gets an even part
  of what the jobs before it left; one whose preview is longer is shown
  again from its files within its part, its footer whole, with a line
  naming the capwrap wait ID that shows it alone. Bad flags, no ID, an
  unknown or ambiguous ID exit 2; a job abandoned (its supervisor died
  without a receipt) or ended with its supervisor (killed, its watchdog
  ended the job) 1. ID may be any unique prefix.
  --notify reports each job's end once per consumer (--cursor NAME, default
  "default"), apart from reads: it waits until a job named has ended
  unreported, prints one line per such job,
    capwrap-ended {"id":ID,"process":"exited","exit_code":N,...}
  records it in the capture directory and exits 0; nothing when every end
  was reported already (exit 0, at once); 75 when --timeout D passes first.
  No preview, and not the jobs' statuses.
`,
		"stop": `capwrap stop [--signal SIG] [--kill-after D] [--raise] ID...
  Sends SIGTERM (or --signal: a name such as INT or SIGHUP, or a number) to
  each background job's process group, SIGKILL if it still runs --kill-after
  later (default: the job's own --kill-after, 5s unless it was launched
  with another), waits for its end and prints the final preview and
  receipt as wait does (several IDs within what one run prints, as wait
  shares it). Exits 0 once the jobs have ended, like kill(1) and
  docker stop; the receipt carries the command's own status (process.state
  cancelled, exit_status 143 after SIGTERM). A job that has already ended is
  shown and not signalled. --raise: when a signal ended the (last) job,
  re-raise it on stop instead of exiting 0. The signal goes through the
  capture's control socket to the job's supervisor, its parent, which
  signals the job itself, so a reused pid is never signalled; a capture
  that a foreground capwrap runs has no supervisor to reach (exit 1). Usage
  errors exit 2.
`,
		"help": `capwrap help [FLAG-or-VERB]
  Detail on one flag (capwrap help timeout) or verb (capwrap help read);
  capwrap help flags lists every flag, capwrap help env every variable.
`,
	}
})
