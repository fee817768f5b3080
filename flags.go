//go:build unix

package main

// capwrap's global flags (SPEC §4 Limits): the options they fill, their
// CAPWRAP_* variables, the bounds of the ones that cost memory, and the
// value types every flag with a size or a duration uses, the verbs' too.

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/internal/text"
)

// options are capwrap's flags for a capture, after the CAPWRAP_* variables
// have filled in what the command line left unset.
type options struct {
	dir          string
	keep         string
	timeout      time.Duration
	killAfter    time.Duration
	drainTimeout time.Duration
	noticeAfter  time.Duration
	stallTimeout time.Duration
	tee, preview bool
	quiet        bool
	// shell is -c STRING: a command line for the shell.
	shell      string
	background bool
	// backgroundAfter is --background-after (0: never).
	backgroundAfter time.Duration
	receiptFile     string
	events          string
	stdoutChars     int
	stderrChars     int
	previewBytes    size
	maxCapture      size
	dirQuota        size
	queueBytes      size
	strict          bool
	leaveDesc       bool
	noRedact        bool
	redactEnv       []string
	redactAllowEnv  []string
	redactFile      []string
	redactPat       []string
	noLabel         bool
	pty             string
	color           string
	help            bool
	version         bool

	// fromEnv names the flags whose value came from a CAPWRAP_* variable,
	// so that errors name what the user actually set.
	fromEnv map[string]bool
	// flags is the flag set that filled o: a verb takes some of them
	// after its name too (verbGlobals).
	flags *pflag.FlagSet
}

// source names where a flag's value came from: "--keep" or "CAPWRAP_KEEP".
func (o *options) source(flag string) string {
	if o.fromEnv[flag] {
		return envName(flag)
	}
	return "--" + flag
}

// newFlagSet is the flag set of capwrap's global flags, filling o.
func newFlagSet(o *options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("capwrap", pflag.ContinueOnError)
	fs.SetInterspersed(false) // capwrap make -j4 passes -j4 to make (SPEC §1)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	o.addFlags(fs)
	return fs
}

// addFlags declares capwrap's global flags on fs, in the order help lists
// them. Every flag but --help, --version and -c has a CAPWRAP_* variable
// of the same name (SPEC §4 Limits).
func (o *options) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.dir, "dir", "", "tool-outputs directory (default ./tool-outputs)")
	fs.StringVar(&o.keep, "keep", "auto", "keep the capture: auto|always|never")
	fs.BoolVar(&o.tee, "tee", false, "stream the output live, then a summary on stderr")
	fs.BoolVar(&o.preview, "preview", false, "print a bounded preview and the receipt after the command ends")
	fs.BoolVar(&o.quiet, "quiet", false, "print only the receipt line")
	fs.StringVar(&o.receiptFile, "receipt-file", "", "also write the receipt as JSON to this path")
	fs.StringVar(&o.events, "events", "", "write live updates of the preview as JSON lines to this file, FIFO or fd:N")
	fs.BoolVar(&o.background, "background", false, "run the command as a background job: print its launch receipt and exit 0")
	fs.Var(durationVar(&o.backgroundAfter, 0), "background-after", "hand the command back as a background job (exit 75) if it still runs after this long")
	fs.Var(durationVar(&o.timeout, 0), "timeout", "send SIGTERM to the command's process group after this long (0: never)")
	fs.Var(durationVar(&o.killAfter, 5*time.Second), "kill-after", "then SIGKILL after this long")
	fs.Var(durationVar(&o.drainTimeout, time.Second), "drain-timeout", "wait this long for end of output after the command exits")
	fs.Var(durationVar(&o.noticeAfter, 5*time.Second), "notice-after", "preview mode: name the capture on stdout if the command still runs after this long (0: never)")
	fs.IntVar(&o.stdoutChars, "stdout-chars", 8000, "preview budget for stdout, in characters, at most 1000000")
	fs.IntVar(&o.stderrChars, "stderr-chars", 2000, "preview budget for stderr, in characters, at most 1000000")
	o.previewBytes = 16 << 10
	fs.Var(&o.previewBytes, "preview-bytes", "ceiling on the whole preview, in bytes, at most 16M")
	o.maxCapture = 32 << 20
	fs.Var(&o.maxCapture, "max-capture-bytes", "bytes kept per capture, both streams together (0: no limit)")
	o.dirQuota = 128 << 20
	fs.Var(&o.dirQuota, "dir-quota", "bytes kept by all captures in the tool-outputs directory (0: no limit)")
	o.queueBytes = 8 << 20
	fs.Var(&o.queueBytes, "queue-bytes", "write queue between the pipe reader and the file writer, 1 byte to 1G")
	fs.Var(durationVar(&o.stallTimeout, 10*time.Second), "stall-timeout", "stop persisting when the file writer makes no progress this long")
	fs.BoolVar(&o.strict, "strict", false, "exit 125 when capwrap itself failed (e.g. disk full)")
	fs.BoolVar(&o.leaveDesc, "leave-descendants", false, "leave running the processes the command started that outlive it (default: end them)")
	fs.BoolVar(&o.noRedact, "no-redact", false, "write output unsanitized (no credential masking)")
	fs.StringArrayVar(&o.redactEnv, "redact-env", nil, "also mask the value of this environment variable (repeatable)")
	fs.StringArrayVar(&o.redactAllowEnv, "redact-allow-env", nil, "do not mask this variable, whose name looks secret but whose value is not (repeatable)")
	fs.StringArrayVar(&o.redactFile, "redact-file", nil, "also mask the values in this file, one per line (repeatable; 16K in all)")
	fs.StringArrayVar(&o.redactPat, "redact-pattern", nil, "also mask matches of this regular expression (repeatable)")
	fs.BoolVar(&o.noLabel, "no-label", false, "leave the command out of the receipt")
	fs.StringVar(&o.pty, "pty", "auto", "give the command terminals for stdout and stderr: auto|always|never")
	fs.StringVar(&o.color, "color", "auto", "colour the summary: auto|always|never")
	fs.StringVarP(&o.shell, "command", "c", "", "run this string with a POSIX shell ($SHELL if sh, bash, zsh, dash or ksh, else /bin/sh)")
	fs.BoolVarP(&o.help, "help", "h", false, "show help")
	fs.BoolVar(&o.version, "version", false, "print the version")
}

// parse fills o from capwrap's command line, up to its command or verb,
// then from the CAPWRAP_* variables for the flags it left unset; the
// error is a refusal. o.flags is the flag set, after an error too.
func (o *options) parse(args []string) error {
	o.flags = newFlagSet(o)
	if err := o.flags.Parse(args); err != nil {
		return refusal{flagError(err), "capwrap --help lists the flags; put -- before the command"}
	}
	fromEnv, err := applyEnv(o.flags, os.Getenv)
	if err != nil {
		return refusal{msg: err.Error()}
	}
	o.fromEnv = fromEnv
	return nil
}

// noVariable names the flags without a CAPWRAP_* variable: --help,
// --version, and -c (a command line taken from the environment would run
// in every capwrap that inherits it).
func noVariable(flag string) bool {
	return flag == "help" || flag == "version" || flag == "command"
}

// envName is the CAPWRAP_* variable of a flag: --dir-quota is
// CAPWRAP_DIR_QUOTA (SPEC §4).
func envName(flag string) string {
	return "CAPWRAP_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyEnv sets every flag the command line left unset from its CAPWRAP_*
// variable, when that is set and not empty; a flag beats its variable. A
// boolean variable also takes yes/no and on/off. It returns the names of
// the flags it set.
func applyEnv(fs *pflag.FlagSet, getenv func(string) string) (map[string]bool, error) {
	var err error
	set := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || noVariable(f.Name) {
			return
		}
		v := getenv(envName(f.Name))
		if v == "" {
			return
		}
		if f.Value.Type() == "bool" {
			switch strings.ToLower(v) {
			case "yes", "on":
				v = "true"
			case "no", "off":
				v = "false"
			}
		}
		if serr := fs.Set(f.Name, v); serr != nil {
			var bad *pflag.InvalidValueError
			if errors.As(serr, &bad) {
				serr = errors.Unwrap(bad) // the variable's name, not the flag's
			}
			if f.Value.Type() == "bool" {
				serr = errors.New("want true or false (or yes/no, on/off, 1/0)")
			}
			err = fmt.Errorf("invalid %s %q: %v", envName(f.Name), v, serr)
			return
		}
		set[f.Name] = true
	})
	return set, err
}

// flagError turns pflag's messages into capwrap's one-line form; a bad
// value reads as its variable's error does (applyEnv): invalid --timeout
// "soon": not a duration...
func flagError(err error) string {
	msg := err.Error()
	var bad *pflag.InvalidValueError
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return "unknown flag: -h"
	case errors.As(err, &bad) && bad.GetFlag() != nil:
		msg = fmt.Sprintf("invalid --%s %q: %v", bad.GetFlag().Name, bad.GetValue(), errors.Unwrap(bad))
	}
	return strings.TrimSpace(strings.SplitN(msg, "\n", 2)[0])
}

// previewBounds are the bounded flags of a preview, which the job verbs
// print too.
var previewBounds = []string{"stdout-chars", "stderr-chars", "preview-bytes"}

// checkBounds checks the named size and count flags that cost memory
// against their bounds.
func (o *options) checkBounds(names ...string) error {
	for _, v := range []struct {
		name     string
		n        int64
		min, max int64
		chars    bool // a count of characters, else a size in bytes
	}{
		{"stdout-chars", int64(o.stdoutChars), 0, maxPreviewChars, true},
		{"stderr-chars", int64(o.stderrChars), 0, maxPreviewChars, true},
		{"preview-bytes", int64(o.previewBytes), 0, maxPreviewBytes, false},
		{"queue-bytes", int64(o.queueBytes), 1, maxQueueBytes, false},
	} {
		if !slices.Contains(names, v.name) || v.n >= v.min && v.n <= v.max {
			continue
		}
		if v.chars {
			return fmt.Errorf("invalid %s %d: want %d to %s characters", o.source(v.name), v.n, v.min, text.Commas(v.max))
		}
		return fmt.Errorf("invalid %s %s: want %s to %s bytes", o.source(v.name), humanSize(v.n), humanSize(v.min), humanSize(v.max))
	}
	return nil
}

// Bounds of the size and count flags that cost memory (issue 13). The
// other sizes (--max-capture-bytes, --dir-quota) are bounded by what a
// size can say, 4096T (maxSize).
const (
	// maxPreviewChars bounds --stdout-chars and --stderr-chars: a preview
	// keeper holds about 5 bytes per character of budget, and stderr's
	// keeper both budgets (SPEC §5), so at most about 10 MB.
	maxPreviewChars = 1_000_000
	// maxPreviewBytes bounds --preview-bytes: two full budgets of 4-byte
	// characters, with room for markers, fit in it.
	maxPreviewBytes = 16 << 20
	// maxQueueBytes bounds --queue-bytes, memory that a slow disk fills.
	maxQueueBytes = 1 << 30
)

// size is a byte count given as plain bytes or with a binary suffix: 64K,
// 32M, 1G, also KiB, MiB, GiB and a trailing B (SPEC §4 Limits). 0 means
// no limit where the flag says so.
type size int64

var sizeSuffixes = []struct {
	suffix string
	shift  uint
}{
	{"KIB", 10}, {"MIB", 20}, {"GIB", 30}, {"TIB", 40},
	{"KB", 10}, {"MB", 20}, {"GB", 30}, {"TB", 40},
	{"K", 10}, {"M", 20}, {"G", 30}, {"T", 40}, {"B", 0},
}

// maxSize is the largest size a size flag takes, 4096T: far beyond any
// disk, and small enough that sums of sizes cannot overflow an int64.
const maxSize = 1 << 52

// parseSize parses a size; the result is in bytes, at most maxSize.
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	var shift uint
	for _, sf := range sizeSuffixes {
		if strings.HasSuffix(t, sf.suffix) {
			t, shift = strings.TrimSpace(strings.TrimSuffix(t, sf.suffix)), sf.shift
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(t, "-") || err == nil && n > maxSize>>shift {
		return 0, fmt.Errorf("too large: at most %s", humanSize(maxSize))
	}
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size (bytes, or with K, M, G, KiB, MiB, GiB)", s)
	}
	return n << shift, nil
}

// humanSize writes n bytes as a user would: 16M rather than 16777216, in
// the largest binary unit that divides it.
func humanSize(n int64) string {
	for _, u := range []struct {
		s     string
		shift uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.s)
		}
	}
	return strconv.FormatInt(n, 10)
}

func (z *size) String() string { return strconv.FormatInt(int64(*z), 10) }
func (z *size) Type() string   { return "size" }
func (z *size) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*z = size(n)
	return nil
}

// duration is a time.Duration flag in Go syntax (500ms, 10s, 1h30m) that
// also takes days, as a user writes them for --older-than: 7d, 1d12h,
// 2.5d (a day is 24 hours). Every duration flag, global or a verb's, is
// one, so they all read the same words.
type duration struct{ p *time.Duration }

// durationVar sets *p to def and returns the flag value that sets *p.
func durationVar(p *time.Duration, def time.Duration) *duration {
	*p = def
	return &duration{p}
}

func (v *duration) String() string {
	if v.p == nil {
		return "0s"
	}
	return v.p.String()
}

// Type is "duration", as pflag's own duration flags say.
func (v *duration) Type() string { return "duration" }

func (v *duration) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*v.p = d
	return nil
}

// durationTerm is one term of a duration: a decimal number and its unit.
// Compiled at first use, not in the package's init: a run that sets no
// duration does not pay for it (issue 28).
var durationTerm = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h|d)`)
})

// errDuration is the error for what is not a duration at all.
var errDuration = errors.New("not a duration: want a number and a unit, such as 500ms, 10s, 2m, 1h30m, 7d or 2.5d (units ns, us, ms, s, m, h, d)")

// parseDuration reads a duration: Go syntax (time.ParseDuration), plus the
// unit d, 24 hours, in any term: 7d, 1d12h, 2.5d. A sign may only lead;
// "0" needs no unit. The result is at most about 292 years.
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg, t = t[0] == '-', t[1:]
	}
	if t == "0" {
		return 0, nil
	}
	if t == "" {
		return 0, errDuration
	}
	tooLong := fmt.Errorf("too long: at most %dd", int64(math.MaxInt64/int64(24*time.Hour)))
	var total time.Duration
	for t != "" {
		m := durationTerm().FindStringSubmatch(t)
		if m == nil {
			return 0, errDuration
		}
		t = t[len(m[0]):]
		num, unit, mult := m[1], m[2], time.Duration(1)
		if unit == "d" {
			unit, mult = "h", 24
		}
		d, err := time.ParseDuration(num + unit)
		if err != nil || d > math.MaxInt64/mult {
			return 0, tooLong // the syntax is right: the number is too big
		}
		d *= mult
		if total > math.MaxInt64-d {
			return 0, tooLong
		}
		total += d
	}
	if neg {
		total = -total
	}
	return total, nil
}
