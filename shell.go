//go:build unix

package main

// Shell syntax and nesting (SPEC §1): `capwrap -c 'STRING'`, the hint for a
// command name that only a shell knows, and telling a nested capwrap.

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/internal/text"
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

// bashOnly are the shellWords that /bin/sh (a POSIX sh such as dash) does
// not know: for them the hint names bash -c rather than -c when -c would
// run /bin/sh.
var bashOnly = map[string]bool{
	"source": true, "declare": true, "typeset": true, "let": true, "shopt": true, "pushd": true,
	"popd": true, "dirs": true, "function": true, "select": true, "[[": true, "]]": true,
	"history": true, "builtin": true, "setopt": true, "unsetopt": true,
}

// shellSyntaxHint explains a command that was not found because its name
// is shell syntax (a builtin, a keyword, an assignment), and names the
// command to run it with (-c, or bash -c for bash's own words when -c
// would run /bin/sh); "" when it is not shell syntax. getenv reads SHELL.
func shellSyntaxHint(argv []string, getenv func(string) string) string {
	name := argv[0]
	var what string
	switch {
	case shellWords[name]:
		what = fmt.Sprintf("%s is shell syntax (a builtin or keyword), not a program", name)
	case assignment.MatchString(name):
		what = fmt.Sprintf("%s is a shell assignment, not a program", shellQuoteSyntax(name))
	default:
		return ""
	}
	words := make([]string, len(argv))
	for i, w := range argv {
		words[i] = shellQuoteSyntax(w)
	}
	line := strings.Join(words, " ")
	if len(line) > 60 {
		line = line[:57] + "..."
	}
	run := "capwrap -c"
	if bashOnly[name] && shellArgv("", getenv)[0] == "/bin/sh" {
		run = "capwrap -- bash -c"
	}
	return fmt.Sprintf("%s: run shell syntax with %s %s", what, run, text.ShellQuote(line))
}

// shellQuoteSyntax quotes a word of a command line meant for a shell: a
// keyword or builtin stays bare (quoted, [[ or ! would be no keyword), an
// assignment keeps NAME= bare and quotes its value, anything else is
// shellQuoteWord.
func shellQuoteSyntax(w string) string {
	if shellWords[w] {
		return w
	}
	if loc := assignment.FindStringIndex(w); loc != nil {
		if w[loc[1]:] == "" {
			return w
		}
		return w[:loc[1]] + text.ShellQuote(w[loc[1]:])
	}
	return text.ShellQuote(w)
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

// nested makes cfg, the run of a capwrap that this capwrap was asked to run
// (`capwrap --timeout 10m -- capwrap -- make`), a pass-through (SPEC §1:
// one capture, the inner one's). What was set on this capwrap's command
// line reaches the inner one: a flag as its CAPWRAP_* variable, so that the
// inner one's own flags still beat it (SPEC §4), and a repeatable
// --redact-* flag ahead of its own arguments, where it adds to them. This
// capwrap's --timeout and --kill-after then only back the inner one up:
// each is lengthened by --kill-after and --drain-timeout and 5 seconds, so
// that the inner one ends its command and prints its receipt first.
func (o *options) nested(cfg *runner.Config) {
	cfg.PassThrough = true
	var env, flags []string
	o.flags.Visit(func(f *pflag.Flag) {
		switch {
		case o.fromEnv[f.Name] || noVariable(f.Name) || f.Name == "background" || f.Name == "background-after":
		case f.Value.Type() == "stringArray":
			for _, v := range f.Value.(pflag.SliceValue).GetSlice() {
				flags = append(flags, "--"+f.Name+"="+v)
			}
		default:
			env = append(env, envName(f.Name)+"="+f.Value.String())
		}
	})
	for _, kv := range env {
		cfg.Environ = setEnv(cfg.Environ, kv)
	}
	cfg.Argv = append(append([]string{cfg.Argv[0]}, flags...), cfg.Argv[1:]...)
	margin := cfg.KillAfter + cfg.DrainTimeout + 5*time.Second
	if cfg.Timeout > 0 {
		cfg.Timeout += margin
	}
	cfg.KillAfter = margin
}

// setEnv is environ with kv ("NAME=value") in place of any NAME= entry.
func setEnv(environ []string, kv string) []string {
	prefix := kv[:strings.IndexByte(kv, '=')+1]
	out := make([]string, 0, len(environ)+1)
	for _, e := range environ {
		if !strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return append(out, kv)
}
