package main

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// TestPackagesIndependent holds the layout of the README: wrap, preview,
// store and redact know nothing of each other (nor of the run that
// composes them), and only internal/runner imports them together. A leaf
// may have internal packages of its own (redact/internal/...).
func TestPackagesIndependent(t *testing.T) {
	const mod = "github.com/capwrap/capwrap/"
	leaves := []string{"wrap", "preview", "store", "redact"}
	for _, p := range leaves {
		pkg, err := build.Default.ImportDir(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range append(pkg.Imports, pkg.TestImports...) {
			if strings.HasPrefix(imp, mod) && !strings.HasPrefix(imp, mod+p+"/internal/") {
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

// TestLayoutRedactWalls holds the redactor's internal walls (STYLE.md,
// "Layout: the next step"): below the policy in redact, each internal
// package imports of this module only what is listed here, so none of
// them, nor its tests, knows the policy. The matcher's tests run on the
// policy's keyword sets through files (redact's TestMatchFixtures).
func TestLayoutRedactWalls(t *testing.T) {
	const mod = "github.com/capwrap/capwrap/"
	type wall struct{ code, tests []string }
	walls := map[string]wall{
		"redact/internal/scan":    {},
		"redact/internal/match":   {code: []string{"redact/internal/scan"}, tests: []string{"redact/internal/scan", "redact/internal/testlog"}},
		"redact/internal/testlog": {},
	}
	for p, w := range walls {
		pkg, err := build.Default.ImportDir(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		check := func(imports, allowed []string) {
			for _, imp := range imports {
				if strings.HasPrefix(imp, mod) && !slices.Contains(allowed, strings.TrimPrefix(imp, mod)) {
					t.Errorf("package %s imports %s", p, imp)
				}
			}
		}
		check(pkg.Imports, w.code)
		check(append(pkg.TestImports, pkg.XTestImports...), w.tests)
	}
}
