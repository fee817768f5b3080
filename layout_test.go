package main

import (
	"go/build"
	"strings"
	"testing"
)

// TestPackagesIndependent holds the layout of the README: wrap, preview,
// store and redact know nothing of each other (nor of the run that
// composes them), and only internal/runner imports them together.
func TestPackagesIndependent(t *testing.T) {
	const mod = "github.com/capwrap/capwrap/"
	leaves := []string{"wrap", "preview", "store", "redact"}
	for _, p := range leaves {
		pkg, err := build.Default.ImportDir(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range append(pkg.Imports, pkg.TestImports...) {
			if strings.HasPrefix(imp, mod) {
				t.Errorf("package %s imports %s", p, imp)
			}
		}
	}
	pkg, err := build.Default.ImportDir("internal/runner", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range leaves {
		found := false
		for _, imp := range pkg.Imports {
			found = found || imp == mod+p
		}
		if !found {
			t.Errorf("internal/runner does not import %s: is the run composed elsewhere?", p)
		}
	}
}
