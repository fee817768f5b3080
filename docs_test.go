package main

// Docs cannot drift (STYLE.md): every flag, verb, verb flag and CAPWRAP_*
// variable the code has appears in the man page, the completions, --help and
// the README, and none of them names one the code does not have.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/capwrap/capwrap/internal/runner"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/redact"
	"github.com/capwrap/capwrap/store"
)

// codeFlags are the global flags, from newFlagSet.
func codeFlags() []string {
	var o options
	return allFlags(newFlagSet(&o))
}

// codeEnv is every CAPWRAP_* variable the code reads.
func codeEnv() []string {
	var vars []string
	for _, f := range codeFlags() {
		if !noVariable(f) {
			vars = append(vars, envName(f))
		}
	}
	return vars
}

var longFlag = regexp.MustCompile(`--([a-z][a-z-]*)`)

// verbFlagsOf are a verb's own flags, as its command's addFlags declares
// them on a flag set of its own (not -h/--help, which every verb has, nor
// the global flags of verbGlobals). The help verb has none.
func verbFlagsOf(t *testing.T, verb string) []string {
	t.Helper()
	newCommand, ok := commands()[verb]
	switch {
	case verb == "help":
		return nil
	case !ok:
		t.Fatalf("verb %s has no command", verb)
	}
	fs := pflag.NewFlagSet(verb, pflag.ContinueOnError)
	newCommand().addFlags(fs)
	return allFlags(fs)
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameSet reports the differences between what the code has and what a
// document says.
func sameSet(t *testing.T, what, doc string, code, documented []string) {
	t.Helper()
	for _, c := range code {
		if !slices.Contains(documented, c) {
			t.Errorf("%s: %s %q is in the code but not documented", doc, what, c)
		}
	}
	for _, d := range documented {
		if !slices.Contains(code, d) {
			t.Errorf("%s: %s %q is documented but not in the code", doc, what, d)
		}
	}
}

// manPage is man/capwrap.1 taken apart: OPTIONS flags, VERBS with their
// flags, ENVIRONMENT variables.
type manPage struct {
	flags []string
	verbs map[string][]string
	env   []string
}

func parseMan(t *testing.T, src string) manPage {
	m := manPage{verbs: map[string][]string{}}
	section, verb := "", ""
	lines := strings.Split(src, "\n")
	for i, line := range lines {
		switch {
		case strings.HasPrefix(line, ".SH "):
			section, verb = strings.Trim(strings.TrimPrefix(line, ".SH "), `"`), ""
			continue
		case strings.HasPrefix(line, ".SS ") && section == "VERBS":
			f := strings.Fields(strings.Trim(strings.TrimPrefix(line, ".SS "), `"`))
			if len(f) < 2 || f[0] != "capwrap" {
				t.Fatalf("man page line %d: verb heading %q is not \"capwrap VERB\"", i+1, line)
			}
			verb = f[1]
			m.verbs[verb] = []string{}
			continue
		}
		if line != ".TP" || i+1 == len(lines) {
			continue
		}
		tag := strings.ReplaceAll(lines[i+1], `\-`, "-")
		switch section {
		case "OPTIONS":
			if f := longFlag.FindStringSubmatch(tag); f != nil {
				m.flags = append(m.flags, f[1])
			}
		case "VERBS":
			if f := longFlag.FindStringSubmatch(tag); f != nil && verb != "" {
				m.verbs[verb] = append(m.verbs[verb], f[1])
			}
		case "ENVIRONMENT":
			if v := regexp.MustCompile(`CAPWRAP_[A-Z_]+`).FindString(tag); v != "" {
				m.env = append(m.env, v)
			}
		}
	}
	return m
}

func TestManPageMatchesCode(t *testing.T) {
	src := readDoc(t, "man/capwrap.1")
	m := parseMan(t, src)
	sameSet(t, "flag", "man/capwrap.1 OPTIONS", codeFlags(), m.flags)
	var manVerbs []string
	for v := range m.verbs {
		manVerbs = append(manVerbs, v)
	}
	sameSet(t, "verb", "man/capwrap.1 VERBS", verbs, manVerbs)
	for _, v := range verbs {
		sameSet(t, "flag of "+v, "man/capwrap.1 VERBS", verbFlagsOf(t, v), m.verbs[v])
	}
	sameSet(t, "variable", "man/capwrap.1 ENVIRONMENT", codeEnv(), m.env)
	sameSet(t, "variable", "man/capwrap.1 (anywhere)", append(codeEnv(), runner.EnvNested), envTokens(src))
	for _, s := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "VERBS", "EXIT STATUS", "FILES", "ENVIRONMENT", "EXAMPLES", "SEE ALSO"} {
		if !regexp.MustCompile(`(?m)^\.SH "?` + s + `"?$`).MatchString(src) {
			t.Errorf("man/capwrap.1 has no %s section", s)
		}
	}
	for _, s := range []string{".BR tee (1)", ".BR timeout (1)"} {
		if !strings.Contains(src, s) {
			t.Errorf("man/capwrap.1 SEE ALSO lacks %s", s)
		}
	}
}

// TestManPageRenders: groff finds nothing to warn about (-ww: all warnings).
func TestManPageRenders(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff not installed: cannot check that man/capwrap.1 renders")
	}
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", "man/capwrap.1")
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("groff -man -ww: %v\n%s", err, out)
	}
	if man, err := exec.LookPath("man"); err == nil {
		cmd := exec.Command(man, "-l", "man/capwrap.1")
		cmd.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 || !bytes.Contains(out, []byte("EXIT STATUS")) {
			t.Errorf("man -l man/capwrap.1: %v\n%s", err, stderr.Bytes())
		}
	}
}

// completionFile is how each completion file spells a long flag.
var completionFiles = map[string]func(flag string) *regexp.Regexp{
	"completions/capwrap.bash": func(f string) *regexp.Regexp { return regexp.MustCompile(`(^|[\s"|(])--` + f + `([\s"|)=]|$)`) },
	"completions/_capwrap":     func(f string) *regexp.Regexp { return regexp.MustCompile(`(^|['{,*\s)])--` + f + `[=\[}]`) },
	"completions/capwrap.fish": func(f string) *regexp.Regexp { return regexp.MustCompile(`\s-l ` + f + `(\s|$)`) },
}

func TestCompletionsMatchCode(t *testing.T) {
	for file, spell := range completionFiles {
		src := readDoc(t, file)
		for _, f := range codeFlags() {
			if !spell(f).MatchString(src) {
				t.Errorf("%s: flag --%s missing", file, f)
			}
		}
		for _, v := range verbs {
			if !regexp.MustCompile(`\b` + v + `\b`).MatchString(src) {
				t.Errorf("%s: verb %s missing", file, v)
			}
			for _, f := range verbFlagsOf(t, v) {
				if !spell(f).MatchString(src) {
					t.Errorf("%s: flag --%s of %s missing", file, f, v)
				}
			}
		}
		// No flag the code lacks (global or a verb's).
		known := codeFlags()
		for _, v := range verbs {
			known = append(known, verbFlagsOf(t, v)...)
		}
		for _, m := range longFlag.FindAllStringSubmatch(src, -1) {
			if !slices.Contains(known, m[1]) && m[1] != "commandline" { // fish's own option
				t.Errorf("%s names --%s, which capwrap does not have", file, m[1])
			}
		}
	}
}

// bashComplete runs the bash completion for words (the last is the one
// being completed) and returns COMPREPLY.
func bashComplete(t *testing.T, env []string, words ...string) []string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	script := `source completions/capwrap.bash
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
_capwrap
printf '%s\n' "${COMPREPLY[@]}"`
	cmd := exec.Command(bash, append([]string{"--norc", "--noprofile", "-c", script, "bash"}, words...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash completion of %q: %v\n%s", words, err, out)
	}
	return strings.Fields(string(out))
}

func TestBashCompletion(t *testing.T) {
	if got := bashComplete(t, nil, "capwrap", "--ti"); !slices.Equal(got, []string{"--timeout"}) {
		t.Errorf("capwrap --ti<TAB> = %q, want --timeout", got)
	}
	if got := bashComplete(t, nil, "capwrap", "--color", "al"); !slices.Equal(got, []string{"always"}) {
		t.Errorf("capwrap --color al<TAB> = %q, want always", got)
	}
	if got := bashComplete(t, nil, "capwrap", "pr"); !slices.Contains(got, "prune") {
		t.Errorf("capwrap pr<TAB> = %q, want prune among them", got)
	}
	if got := bashComplete(t, nil, "capwrap", "read", "X", "--st"); !slices.Equal(got, []string{"--stream"}) {
		t.Errorf("capwrap read X --st<TAB> = %q, want --stream", got)
	}

	// Capture IDs from --dir, else CAPWRAP_DIR.
	dir := t.TempDir()
	ids := []string{"20261130T030612Z-k3j4h5g6x2", "20261130T030613Z-aaaaaaaaaa"}
	for _, id := range ids {
		if err := os.Mkdir(filepath.Join(dir, id), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	got := bashComplete(t, nil, "capwrap", "--dir", dir, "show", "2026")
	sort.Strings(got)
	if !slices.Equal(got, ids) {
		t.Errorf("capwrap --dir D show 2026<TAB> = %q, want %q", got, ids)
	}
	got = bashComplete(t, []string{"CAPWRAP_DIR=" + dir}, "capwrap", "prune", "--id", "20261130T030612")
	if !slices.Equal(got, ids[:1]) {
		t.Errorf("CAPWRAP_DIR=D capwrap prune --id 20261130T030612<TAB> = %q, want %q", got, ids[:1])
	}

	// After --, the wrapped command: its name, then (with bash-completion
	// loaded) its own completion, else file names.
	if got := bashComplete(t, nil, "capwrap", "--", "capwrap-no-such-prefix"); len(got) != 0 {
		t.Errorf("capwrap -- capwrap-no-such-prefix<TAB> = %q, want nothing", got)
	}
	if got := bashComplete(t, nil, "capwrap", "--timeout", "5s", "--", "ech"); !slices.Contains(got, "echo") {
		t.Errorf("capwrap --timeout 5s -- ech<TAB> = %q, want echo among them", got)
	}
}

// envTokens are the CAPWRAP_* names a text mentions.
func envTokens(s string) []string {
	var out []string
	for _, v := range regexp.MustCompile(`CAPWRAP_[A-Z_]*[A-Z]`).FindAllString(strings.ReplaceAll(s, `\-`, "-"), -1) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func TestEnvDocumented(t *testing.T) {
	code := codeEnv()
	if !slices.Contains(code, store.EnvDir) {
		t.Errorf("store reads %s, which no flag maps to", store.EnvDir)
	}
	help := func(topic string) string {
		var b bytes.Buffer
		printHelp(&b, topic)
		return b.String()
	}
	// --help names a few as examples; "help flags" and "help env" all.
	for _, v := range envTokens(help("")) {
		if !slices.Contains(code, v) {
			t.Errorf("--help names %s, which capwrap does not read", v)
		}
	}
	sameSet(t, "variable", "capwrap help flags", code, envTokens(help("flags")))
	sameSet(t, "variable", "capwrap help env", code, envTokens(help("env")))
	sameSet(t, "variable", "README.md", append(code, runner.EnvNested), envTokens(readDoc(t, "README.md")))
	for _, f := range codeFlags() {
		if noVariable(f) {
			continue
		}
		if !strings.Contains(help(f), "variable: "+envName(f)) {
			t.Errorf("capwrap help %s does not name %s", f, envName(f))
		}
	}
}

// TestHelpTopics: every flag and verb has "capwrap help TOPIC".
func TestHelpTopics(t *testing.T) {
	for _, topic := range append(append(codeFlags(), verbs...), "flags", "env") {
		if topic == "help" && slices.Contains(verbs, "help") {
			// the verb's help, not the flag's
		}
		var b bytes.Buffer
		if !printHelp(&b, topic) && topic != "help" {
			t.Errorf("capwrap help %s: no help", topic)
		}
	}
	var b bytes.Buffer
	printHelp(&b, "")
	for _, line := range strings.Split(b.String(), "\n") {
		if len([]rune(line)) > 100 {
			t.Errorf("--help line longer than 100 columns: %q", line)
		}
	}
	if runtime.GOOS == "" {
		t.Skip()
	}
}

// TestMakeInstall: make install puts the binary, the man page and the
// completions in their standard places under PREFIX, and the binary runs;
// it builds into BIN, so the checkout's ./capwrap is neither made nor
// replaced by the test (make test must not leave a binary stamped with the
// test's version behind).
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds capwrap")
	}
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	before, beforeErr := os.Stat("capwrap")
	prefix := t.TempDir()
	bindir := t.TempDir()
	bin := filepath.Join(t.TempDir(), "capwrap")
	cmd := exec.Command(mk, "install", "PREFIX="+prefix, "VERSION=v0.0.0-test", "BINDIR="+bindir, "BIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	for _, f := range []string{
		"share/man/man1/capwrap.1",
		"share/bash-completion/completions/capwrap",
		"share/zsh/site-functions/_capwrap",
		"share/fish/vendor_completions.d/capwrap.fish",
	} {
		if _, err := os.Stat(filepath.Join(prefix, f)); err != nil {
			t.Errorf("make install: %v", err)
		}
	}
	out, err := exec.Command(filepath.Join(bindir, "capwrap"), "--version").Output()
	if err != nil || string(out) != "capwrap v0.0.0-test\n" {
		t.Errorf("installed capwrap --version = %q, %v; want the stamped version", out, err)
	}
	after, afterErr := os.Stat("capwrap")
	switch {
	case os.IsNotExist(beforeErr) && afterErr == nil:
		t.Errorf("make install made ./capwrap in the checkout")
	case beforeErr == nil && (afterErr != nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size()):
		t.Errorf("make install replaced the checkout's ./capwrap")
	}
}

// TestVerbGlobalsDocumented: the global flags a verb takes after its name
// (verbGlobals), and its -h/--help, are in its help topic, the man page's
// VERBS section, and each completion file, and bash completes them after
// the verb.
func TestVerbGlobalsDocumented(t *testing.T) {
	man := readDoc(t, "man/capwrap.1")
	verbsSection := man[strings.Index(man, ".SH VERBS"):]
	verbsSection = strings.ReplaceAll(verbsSection[:strings.Index(verbsSection, `.SS "capwrap list"`)], `\-`, "-")
	for _, v := range verbs {
		if v == "help" {
			continue
		}
		var b bytes.Buffer
		printHelp(&b, v)
		for _, f := range append([]string{"help"}, verbGlobals()[v]...) {
			if !strings.Contains(b.String(), "--"+f) {
				t.Errorf("capwrap help %s does not name --%s", v, f)
			}
			if !strings.Contains(verbsSection, "--"+f) {
				t.Errorf("man/capwrap.1 VERBS does not say that verbs take --%s", f)
			}
			if got := bashComplete(t, nil, "capwrap", v, "--"+f); !slices.Contains(got, "--"+f) {
				t.Errorf("capwrap %s --%s<TAB> = %q, want --%s among them", v, f, got, f)
			}
		}
	}
	for file := range completionFiles {
		src := readDoc(t, file)
		if !strings.Contains(src, "verbGlobals") {
			t.Errorf("%s does not say where its verbs' global flags come from (verbGlobals)", file)
		}
	}
}

// TestCatalogueDocumented: the README's redaction section names every kind
// the built-in catalogue can write in a marker, and its count (SPEC §6
// source 2; issue 16: "the README lists the catalogue's size").
func TestCatalogueDocumented(t *testing.T) {
	readme := readDoc(t, "README.md")
	start := strings.Index(readme, "\n## Redaction")
	end := strings.Index(readme[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("README.md has no Redaction section")
	}
	section := strings.Join(strings.Fields(readme[start:start+1+end]), " ")
	kinds := redact.Catalogue()
	if want := "a catalogue of " + strconv.Itoa(len(kinds)) + " marker kinds"; !strings.Contains(section, want) {
		t.Errorf("README.md's Redaction section does not say %q", want)
	}
	for _, k := range kinds {
		if !regexp.MustCompile(`(^|[ (` + "`" + `])` + regexp.QuoteMeta(k) + `[ ,.)` + "`" + `]`).MatchString(section) {
			t.Errorf("README.md's Redaction section does not name the kind %s", k)
		}
	}
}

// TestReceiptKeysDocumented: the README's receipt table and the man page
// name every key of a stream's receipt object, the accounting's keys and
// identity, and every representation (SPEC §7), so a key added to
// receipt.Stream cannot go undocumented.
func TestReceiptKeysDocumented(t *testing.T) {
	readme, man := readDoc(t, "README.md"), readDoc(t, "man/capwrap.1")
	var keys []string
	for _, v := range []any{receipt.Stream{}, receipt.Accounting{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			keys = append(keys, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
		}
	}
	for _, r := range []receipt.Representation{receipt.RepresentationRedactedText, receipt.RepresentationDecodedText,
		receipt.RepresentationBinary, receipt.RepresentationRaw} {
		keys = append(keys, string(r))
	}
	for _, k := range keys {
		if !strings.Contains(readme, "`"+k+"`") {
			t.Errorf("README.md's receipt table does not name %s", k)
		}
		if !strings.Contains(man, ".B "+strings.ReplaceAll(k, "-", `\-`)) && !strings.Contains(man, ".BR "+strings.ReplaceAll(k, "-", `\-`)) &&
			!strings.Contains(man, "("+k) && !strings.Contains(man, k+" ") {
			t.Errorf("man/capwrap.1 does not name %s", k)
		}
	}
	if !strings.Contains(readme, "`observed = accepted + pending + discarded`") {
		t.Errorf("README.md does not state the accounting identity")
	}
}
