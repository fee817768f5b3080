//go:build unix

package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/internal/text"
	"github.com/capwrap/capwrap/store/export"
)

// exportOptions are the flags of `capwrap export`.
type exportOptions struct {
	to string
}

func (o *exportOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.to, "to", "", "where to: a new or empty directory, or FILE.tar.gz (required)")
}

func newExportCommand() command {
	var o exportOptions
	return command{nargs: -1, addFlags: o.addFlags,
		run: func(e *env, args []string) error { return runExport(e, o, args) }}
}

// runExport is `capwrap export ID... --to DIR|FILE.tar.gz` (SPEC §8): the
// captures with their receipts and a manifest, copied by package export;
// one line per capture and a total on stdout (as prune), a warning for
// each file marked unavailable. A --to that exists (a directory not
// empty, a file) is a usage error; nothing is written into or over it.
func runExport(e *env, o exportOptions, args []string) error {
	if o.to == "" {
		hint := fmt.Sprintf("usage: %s (capwrap help export)", synopsis("export"))
		if len(args) > 0 && assignment().MatchString(args[0]) {
			// capwrap export FOO=1: the shell's export, not the verb.
			hint = fmt.Sprintf("export is capwrap's verb; the shell's export runs with capwrap -c 'export %s'", args[0])
		}
		return usageError{"export: missing --to DIR or --to FILE.tar.gz", hint}
	}
	dir, err := openCaptures(e)
	if err != nil {
		return err
	}
	defer dir.Close()
	ids, err := resolveIDs(dir, args)
	if err != nil {
		return err
	}
	m, err := export.Export(dir, ids, o.to, export.Options{Version: versionString(), Now: time.Now()})
	switch {
	case errors.Is(err, export.ErrExists):
		return usageError{"export: " + err.Error(), "give --to a new name or an empty directory: export never writes into or over anything"}
	case err != nil:
		return failure{msg: fmt.Sprintf("export to %s: %v", o.to, err)}
	}
	var total int64
	for _, c := range m.Captures {
		for _, u := range c.Unavailable {
			e.d.Warnf("%s is unavailable (%s); the manifest says so", u.Path, u.Reason)
		}
		total += c.StreamBytes()
		fmt.Fprintf(e.stdout, "exported %s  %s  %s\n", c.ID, text.Bytes(c.StreamBytes()), c)
	}
	n := len(m.Captures)
	if export.IsArchive(o.to) {
		top := export.TopDir(o.to)
		fmt.Fprintf(e.stdout, "%d capture%s, %s, exported to %s (%s/ inside)\n", n, text.Plural(n), text.Bytes(total), o.to, top)
		e.d.Hintf("tar xzf %s extracts %s/; then capwrap --dir %s list reads it", text.ShellQuote(o.to), top, text.ShellQuote(top))
		return nil
	}
	fmt.Fprintf(e.stdout, "%d capture%s, %s, exported to %s: capwrap --dir %s list reads it\n", n, text.Plural(n), text.Bytes(total), o.to, text.ShellQuote(o.to))
	return nil
}
