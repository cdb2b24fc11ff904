package flink

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// groundFiles are the package's ground floor (doc.go): the names every other file may use.
var groundFiles = []string{"ground.go", "spec.go", "layered.go", "defines.go", "kept.go", "livejob.go", "pack.go"}

// TestGroundNamesNothingAbove: a ground file uses no package-level name that a file above the
// ground defines, so the feature files stand on it and not it on them (doc.go, "Files"). A name a
// ground file needs from a feature belongs on the ground.
func TestGroundNamesNothingAbove(t *testing.T) {
	files, err := filepath.Glob("*.go")
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
		if err != nil {
			t.Fatal(err)
		}
		parsed[f] = af
		if slices.Contains(groundFiles, f) {
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
	for _, g := range groundFiles {
		af, ok := parsed[g]
		if !ok {
			t.Errorf("%s is not a file of the package: groundFiles and doc.go name the ground", g)
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
