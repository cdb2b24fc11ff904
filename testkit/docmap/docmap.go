// Package docmap checks a package's doc.go map of its files (am/doc.go, framework/flink/doc.go): it
// names every non-test Go file of the package, and nothing that is not one, so a new file cannot
// join without saying what it holds; and, where the map names a ground floor, that the ground's
// files name nothing of the files above it (CheckGround).
package docmap

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fileName is a Go file's name as a doc.go map names it.
var fileName = regexp.MustCompile(`\b([a-z0-9_]+\.go)\b`)

// Check fails t for each non-test Go file of dir that dir's doc.go does not name, and for each
// name in doc.go that is not a file of dir.
func Check(t *testing.T, dir string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(dir, "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range fileName.FindAllStringSubmatch(string(doc), -1) {
		named[m[1]] = true
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		f = filepath.Base(f)
		if !strings.HasSuffix(f, "_test.go") && f != "doc.go" && !named[f] {
			t.Errorf("doc.go's file list does not name %s: add a line saying what it holds", f)
		}
	}
	for f := range named {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("doc.go names %s, which is not a file of the package", f)
		}
	}
}

// CheckGround fails t for each use, in one of dir's ground files, of a package-level name that a
// non-test file of dir outside the ground defines: the ground holds the names the other files share,
// so it stands below them all. Identifiers are matched by name within each file, as the parser
// resolves them: a name a ground file declares itself (a local, a parameter) is its own, and a
// selector's name or a literal's field key is not a package-level name.
func CheckGround(t *testing.T, dir string, ground ...string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	above := map[string]string{} // a package-level name defined above the ground -> its file
	parsed := map[string]*ast.File{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		f = filepath.Base(f)
		if err != nil {
			t.Fatal(err)
		}
		parsed[f] = af
		if slices.Contains(ground, f) {
			continue
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name != "init" {
					above[d.Name.Name] = f
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						above[s.Name.Name] = f
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.Name != "_" {
								above[n.Name] = f
							}
						}
					}
				}
			}
		}
	}
	for _, g := range ground {
		af, ok := parsed[g]
		if !ok {
			t.Errorf("%s is not a file of the package: ground and doc.go name the ground", g)
			continue
		}
		// An identifier the file does not resolve itself is the package's or a predeclared one
		// (a selector's name and a literal's field key are not package-level names).
		skip := map[*ast.Ident]bool{}
		ast.Inspect(af, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				skip[n.Sel] = true
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok {
					skip[id] = true
				}
			case *ast.Ident:
				if n.Obj == nil && !skip[n] {
					if f, ok := above[n.Name]; ok {
						t.Errorf("%s (ground) names %s of %s, above the ground: move it to the ground or the use up", fset.Position(n.Pos()), n.Name, f)
					}
				}
			}
			return true
		})
	}
}
