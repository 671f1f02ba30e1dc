package loop_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Function size limits: a function longer than maxFuncLines or with more
// than maxFuncBranches branches does more than one step of its algorithm;
// it is split into named steps.
const (
	maxFuncLines    = 80
	maxFuncBranches = 25
)

// branches counts the decisions in n: each if, for and range, each case or
// select clause but the default, and each && and ||.
func branches(n ast.Node) int {
	c := 0
	ast.Inspect(n, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if x.List != nil {
				c++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}

// funcName is fn's name as a reader finds it: Type.Method or func.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// oversized is every function of the Go files under root (tests, test data
// and bin/ left out) over the limits, as "file:line: name (n lines, b
// branches)".
func oversized(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "bin" || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start := fset.Position(fn.Pos())
			lines := fset.Position(fn.End()).Line - start.Line + 1
			if b := branches(fn.Body); lines > maxFuncLines || b > maxFuncBranches {
				out = append(out, fmt.Sprintf("%s:%d: %s (%d lines, %d branches)", p, start.Line, funcName(fn), lines, b))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFunctions_NoneOverTheLimits holds every non-test function to at most
// maxFuncLines lines and maxFuncBranches branches.
func TestFunctions_NoneOverTheLimits(t *testing.T) {
	for _, p := range oversized(t, ".") {
		t.Errorf("%s: over %d lines or %d branches; split it into named steps", p, maxFuncLines, maxFuncBranches)
	}
}

// TestFunctions_TheLimitsAreMeasured: a planted function over each limit
// is found, one within both is not.
func TestFunctions_TheLimitsAreMeasured(t *testing.T) {
	dir := t.TempDir()
	long := "package p\n\nfunc long() {\n" + strings.Repeat("\t_ = 1\n", maxFuncLines) + "}\n"
	branchy := "package p\n\nfunc branchy(x int) {\n" + strings.Repeat("\tif x > 0 {\n\t}\n", maxFuncBranches+1) + "}\n"
	fine := "package p\n\nfunc fine(a, b bool) bool {\n\tif a && b {\n\t\treturn true\n\t}\n\treturn false\n}\n"
	for name, src := range map[string]string{"long.go": long, "branchy.go": branchy, "fine.go": fine, "skipped_test.go": long} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := oversized(t, dir)
	if len(got) != 2 || !strings.Contains(strings.Join(got, "\n"), ": long (82 lines") || !strings.Contains(strings.Join(got, "\n"), ": branchy (") {
		t.Fatalf("oversized: %q, want long and branchy alone", got)
	}
}
