package main

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// moduleImports is the layout of the README as a table: for each package
// of the module (by directory, "." the CLI), the module's packages it may
// import, its tests included. wrap, preview, store, redact and receipt are
// leaves that know nothing of each other (store writes receipts); only
// internal/runner composes a run from them, internal/job supervises runs,
// and the CLI calls both. Below redact, match (the streaming matcher)
// knows only scan, never the policy; testlog is test data only.
var moduleImports = map[string][]string{
	".":                       {"internal/events", "internal/job", "internal/runner", "internal/sigcatch", "internal/text", "receipt", "redact", "store", "store/export", "store/readback", "wrap"},
	"internal/job":            {"internal/guard", "internal/runner", "internal/sigcatch", "internal/text", "preview", "receipt", "store", "wrap"},
	"internal/events":         {"preview", "receipt"},
	"internal/runner":         {"internal/events", "internal/guard", "internal/sigcatch", "internal/text", "preview", "receipt", "redact", "store", "wrap"},
	"internal/guard":          nil,
	"internal/sigcatch":       nil,
	"internal/text":           nil,
	"store":                   {"receipt"},
	"store/readback":          {"receipt", "store"},
	"store/export":            {"receipt", "store"},
	"receipt":                 nil,
	"wrap":                    nil,
	"preview":                 nil,
	"redact":                  {"redact/internal/match", "redact/internal/scan", "redact/internal/testlog"},
	"redact/internal/match":   {"redact/internal/scan", "redact/internal/testlog"},
	"redact/internal/scan":    nil,
	"redact/internal/testlog": nil,
	"bench/smallwrites":       nil,
}

// TestPackagesIndependent holds every package of the module to its row of
// moduleImports, and fails for a package the table does not know (a new
// package must say where it stands).
func TestPackagesIndependent(t *testing.T) {
	const mod = "github.com/capwrap/capwrap/"
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "tool-outputs") {
			return filepath.SkipDir
		}
		pkg, err := build.Default.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return err
		}
		allowed, known := moduleImports[path]
		if !known {
			t.Errorf("package %s is not in moduleImports: say which of the module's packages it may import", path)
			return nil
		}
		for _, imp := range append(append(pkg.Imports, pkg.TestImports...), pkg.XTestImports...) {
			if rest, ok := strings.CutPrefix(imp, mod); ok && !slices.Contains(allowed, rest) {
				t.Errorf("package %s imports %s", path, rest)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
