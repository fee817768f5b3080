//go:build unix

package main

// What every verb works with (SPEC §8, §10): its env, the parsing of its
// command line, and the opening of the tool-outputs directory and of a
// capture by ID. The verbs open an existing directory (never create one)
// and reach every file through the store's os.Root.

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/store"
)

// env is what a verb works with: where it prints, the environment,
// capwrap's voice (for warnings and hints; errors it returns), and the
// global flags, given before its name or (those of verbGlobals) after it.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	d              diag
	global         *options
}

// verbGlobals are the global flags that a verb also takes after its name,
// as if they came before it (capwrap read ID --dir X is capwrap --dir X
// read ID): every verb reads a tool-outputs directory, and wait and stop
// print previews. The other global flags are about running a command.
var verbGlobals = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"list": {"dir"}, "show": {"dir"}, "read": {"dir"}, "export": {"dir"}, "prune": {"dir"},
		"wait": {"dir", "stdout-chars", "stderr-chars", "preview-bytes"},
		"stop": {"dir", "stdout-chars", "stderr-chars", "preview-bytes"},
	}
})

// verbFlags is the flag set of one verb, with -h/--help: errors returned,
// not printed; flags and the ID in any order.
func verbFlags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	fs.BoolP("help", "h", false, "show this verb's help")
	return fs
}

// parseVerb parses the command line of verb c into fs, which holds its
// flags: those flags, the global ones of verbGlobals (set in o, where a
// flag after the verb beats one before it and its variable), and c.nargs
// arguments. help says -h or --help was given; the error is a usageError.
func parseVerb(c command, fs *pflag.FlagSet, args []string, o *options) (help bool, err error) {
	for _, name := range verbGlobals()[fs.Name()] {
		if o.flags == nil {
			break
		}
		if f := o.flags.Lookup(name); f != nil {
			fs.AddFlag(f)
		}
	}
	err = fs.Parse(args)
	if err == nil {
		for _, name := range verbGlobals()[fs.Name()] {
			if fs.Changed(name) {
				delete(o.fromEnv, name) // errors name the flag, not its variable
			}
		}
		help, _ = fs.GetBool("help")
	}
	var msg string
	switch {
	case err != nil:
		msg = flagError(err)
	case help:
		return true, nil
	case fs.NArg() < max(c.nargs, -c.nargs):
		msg = "missing capture ID"
	case fs.NArg() > c.nargs && c.nargs >= 0:
		msg = fmt.Sprintf("unexpected argument %q", fs.Arg(c.nargs))
	default:
		return false, nil
	}
	return false, usageError{fs.Name() + ": " + msg, fmt.Sprintf("usage: %s (capwrap help %s)", synopsis(fs.Name()), fs.Name())}
}

// openCaptures opens the tool-outputs directory chosen by --dir or
// CAPWRAP_DIR (SPEC §4) for reading back. A missing directory is an error,
// not created; when the location was not chosen and ./tool-outputs is
// missing, the fallback location of SPEC §4 is used if it exists. The
// caller closes the directory.
func openCaptures(e *env) (*store.Dir, error) {
	path, chosen := store.Locate(e.global.dir, e.getenv)
	dir, err := store.OpenExisting(path)
	if errors.Is(err, store.ErrNoDir) && !chosen {
		if fb := store.FallbackPath(e.getenv); fb != "" {
			if fdir, ferr := store.OpenExisting(fb); ferr == nil {
				e.d.Warnf("%s does not exist; reading the captures in %s", path, fb)
				return fdir, nil
			}
		}
	}
	switch {
	case errors.Is(err, store.ErrNoDir):
		return nil, usageError{fmt.Sprintf("no captures in %s: it does not exist", path),
			"pass --dir or set CAPWRAP_DIR to the tool-outputs directory of the captures"}
	case err != nil:
		if u, ok := errors.AsType[*store.UnsafeError](err); ok {
			return nil, failure{u.Error(), u.Hint()}
		}
		return nil, usageError{msg: fmt.Sprintf("cannot read tool-outputs directory %s: %v", path, store.UnwrapPath(err))}
	}
	return dir, nil
}

// openCapture opens the tool-outputs directory and the capture named by
// idArg (any unique prefix of an ID); the caller closes dir.
func openCapture(e *env, idArg string) (*store.Dir, store.Entry, error) {
	dir, err := openCaptures(e)
	if err != nil {
		return nil, store.Entry{}, err
	}
	c, err := entryOf(dir, idArg)
	if err != nil {
		dir.Close()
		return nil, store.Entry{}, err
	}
	return dir, c, nil
}

// entryOf resolves idArg in dir and reads that capture's entry.
func entryOf(dir *store.Dir, idArg string) (store.Entry, error) {
	id, err := resolveID(dir, idArg)
	if err != nil {
		return store.Entry{}, err
	}
	c, err := dir.Entry(id)
	if u, ok := errors.AsType[*store.UnsafeError](err); ok {
		return store.Entry{}, failure{u.Error(), u.Hint()}
	} else if err != nil {
		return store.Entry{}, failure{msg: fmt.Sprintf("cannot read capture %s: %v", id, store.UnwrapPath(err))}
	}
	return c, nil
}

// resolveIDs resolves each of args (resolveID).
func resolveIDs(dir *store.Dir, args []string) ([]string, error) {
	var ids []string
	for _, a := range args {
		id, err := resolveID(dir, a)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// resolveID turns a unique prefix into a full capture ID (SPEC §8), or
// says why not: a usageError, or a failure to read the directory.
func resolveID(dir *store.Dir, prefix string) (string, error) {
	id, err := dir.Lookup(prefix)
	switch {
	case err == nil:
		return id, nil
	case errors.Is(err, store.ErrBadID):
		return "", usageError{fmt.Sprintf("%q is not a capture id", prefix),
			"IDs look like 20261130T030612Z-k3j4h5g6x2, or any unique prefix of one; capwrap list shows them"}
	case errors.Is(err, store.ErrUnknownID):
		return "", usageError{fmt.Sprintf("no capture %s in %s", prefix, dir.Path()), "capwrap list shows the captures"}
	case errors.Is(err, store.ErrAmbiguousID):
		return "", usageError{fmt.Sprintf("capture id %s is ambiguous: %v", prefix, strings.TrimSuffix(err.Error(), ": "+store.ErrAmbiguousID.Error())),
			"give more characters of the ID; capwrap list shows them"}
	}
	return "", failure{msg: fmt.Sprintf("cannot read %s: %v", dir.Path(), store.UnwrapPath(err))}
}
