package surf_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxMainFuncLines bounds a function of cmd/surf's package main: the CLI
// is thin (flags, wiring, printing), and a long function there is a
// command body that wants splitting, or logic that belongs in a library
// package.
const maxMainFuncLines = 80

// TestMainIsThin checks that package main (cmd/surf) has no function over
// maxMainFuncLines lines. (Issue 30's other target, under maxMainLines
// lines of non-test code, is TestMainIsUnderItsLineBudget.)
func TestMainIsThin(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("cmd", "surf", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	parsed := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name != "main" {
			t.Errorf("%s is package %s, want main", path, f.Name.Name)
		}
		parsed++
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			if n > maxMainFuncLines {
				t.Errorf("%s: %s is %d lines, over %d: split it, or move what a Go program would reuse out of package main",
					fset.Position(fd.Pos()), fd.Name.Name, n, maxMainFuncLines)
			}
		}
	}
	if parsed == 0 {
		t.Fatal("no Go files in cmd/surf")
	}
}

// maxMainLines bounds package main's non-test code (issue 30): what a Go
// program would reuse lives in a library package.
const maxMainLines = 6000

// TestMainIsUnderItsLineBudget checks that package main's non-test .go
// files total under maxMainLines lines.
func TestMainIsUnderItsLineBudget(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("cmd", "surf", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(b, []byte("\n"))
	}
	if total == 0 {
		t.Fatal("no Go files in cmd/surf")
	}
	if total >= maxMainLines {
		t.Errorf("package main has %d lines of non-test code, want under %d: move what a Go program would reuse out of it", total, maxMainLines)
	}
	t.Logf("package main: %d lines of non-test code", total)
}
