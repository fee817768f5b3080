package main

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// TestPackagesIndependent holds the layout of the README: wrap, preview,
// store and redact know nothing of each other (nor of the run that
// composes them), and only internal/runner imports them together. Of the
// module's packages, a leaf imports only what the table allows: the
// receipt schema (a leaf itself) is the store's to write.
func TestPackagesIndependent(t *testing.T) {
	const mod = "github.com/capwrap/capwrap/"
	leaves := []string{"wrap", "preview", "store", "redact", "receipt", "internal/sigcatch"}
	allowed := map[string][]string{"store": {"receipt"}}
	for _, p := range leaves {
		pkg, err := build.Default.ImportDir(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range append(pkg.Imports, pkg.TestImports...) {
			if rest, ok := strings.CutPrefix(imp, mod); ok && !slices.Contains(allowed[p], rest) {
				t.Errorf("package %s imports %s", p, imp)
			}
		}
	}
	pkg, err := build.Default.ImportDir("internal/runner", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range leaves[:4] {
		found := false
		for _, imp := range pkg.Imports {
			found = found || imp == mod+p
		}
		if !found {
			t.Errorf("internal/runner does not import %s: is the run composed elsewhere?", p)
		}
	}
}
