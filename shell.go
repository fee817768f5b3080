package main

// Shell syntax and nesting (SPEC §1): `capwrap -c 'STRING'`, the hint for a
// command name that only a shell knows, and telling a nested capwrap.

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// posixShells are the shells -c runs STRING with when $SHELL is one of them.
var posixShells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true}

// shellArgv is the command line of -c STRING: $SHELL when it is a
// POSIX-family shell, else /bin/sh, with -c STRING.
func shellArgv(script string, getenv func(string) string) []string {
	sh := getenv("SHELL")
	if !posixShells[filepath.Base(sh)] || !filepath.IsAbs(sh) {
		sh = "/bin/sh"
	}
	return []string{sh, "-c", script}
}

// shellWords are the builtins and keywords of POSIX shells (and of bash
// and zsh) that are no program: `capwrap -- cd ..` cannot run them.
var shellWords = map[string]bool{
	"cd": true, "source": true, ".": true, "export": true, "unset": true, "set": true, "alias": true,
	"unalias": true, "eval": true, "exec": true, "exit": true, "return": true, "shift": true, "trap": true,
	"umask": true, "ulimit": true, "readonly": true, "local": true, "declare": true, "typeset": true,
	"let": true, "shopt": true, "pushd": true, "popd": true, "dirs": true, "jobs": true, "fg": true,
	"bg": true, "hash": true, "builtin": true, "history": true, "setopt": true, "unsetopt": true,
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "for": true, "while": true,
	"until": true, "do": true, "done": true, "case": true, "esac": true, "function": true,
	"select": true, "{": true, "}": true, "[[": true, "]]": true, "!": true, "time": true,
}

// assignment is a shell variable assignment word, VAR=value.
var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// shellSyntaxHint explains a command that was not found because its name
// is shell syntax (a builtin, a keyword, an assignment), and names -c; ""
// when it is not.
func shellSyntaxHint(argv []string) string {
	name := argv[0]
	var what string
	switch {
	case shellWords[name]:
		what = fmt.Sprintf("%s is shell syntax (a builtin or keyword), not a program", name)
	case assignment.MatchString(name):
		what = fmt.Sprintf("%s is a shell assignment, not a program", shellQuoteWord(name))
	default:
		return ""
	}
	line := strings.Join(quoteAll(argv), " ")
	if len(line) > 60 {
		line = line[:57] + "..."
	}
	return fmt.Sprintf("%s: run shell syntax with capwrap -c %s", what, shellQuoteWord(line))
}

// quoteAll shell-quotes each word.
func quoteAll(words []string) []string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellQuoteWord(w)
	}
	return q
}

// shellQuoteWord quotes s for a POSIX shell when it needs it.
func shellQuoteWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isCapwrap reports whether name, a command to run, is capwrap: a program
// named capwrap, as given or as found through PATH. (Not "the same file as
// this program": one binary may serve under several names, as this one's
// tests do.)
func isCapwrap(name string) bool {
	if filepath.Base(name) == "capwrap" {
		return true
	}
	path, err := exec.LookPath(name)
	return err == nil && filepath.Base(path) == "capwrap"
}

// selectsVerb reports whether capwrap's arguments args select a verb (SPEC
// §1): its flags, then a verb before any "--".
func selectsVerb(args []string) bool {
	var o options
	fs := newFlagSet(&o)
	if err := fs.Parse(args); err != nil || o.shell != "" {
		return false
	}
	rest := fs.Args()
	return len(rest) > 0 && fs.ArgsLenAtDash() != 0 && isVerb(rest[0])
}
