package verify_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestAPINamesNoInternalPackage: every exported declaration of package verify (functions, methods on
// exported types, exported types with their exported fields and embedded types, and exported variables and
// constants) uses only types a user's module can name. A user cannot import .../internal/..., so a
// signature that mentions one of its types cannot be written down outside this module (declared as a
// variable, passed from a helper, stored in a struct). Alias declarations count too: an alias of an
// internal type is still that type.
func TestAPINamesNoInternalPackage(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var problems []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		internal := map[string]string{} // local import name -> path, for the internal imports
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(path+"/", "/internal/") {
				continue
			}
			local := filepath.Base(path)
			if imp.Name != nil {
				local = imp.Name.Name
			}
			internal[local] = path
		}
		if len(internal) == 0 {
			continue
		}
		// mentions reports each selector of an internal package inside node.
		mentions := func(what string, node ast.Node) {
			if node == nil {
				return
			}
			ast.Inspect(node, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] != "" {
					problems = append(problems, fmt.Sprintf("%s: %s mentions %s.%s (%s)", fset.Position(sel.Pos()), what, id.Name, sel.Sel.Name, internal[id.Name]))
				}
				return true
			})
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				what := d.Name.Name
				if d.Recv != nil {
					recv := receiverName(d.Recv.List[0].Type)
					if !ast.IsExported(recv) {
						continue
					}
					what = recv + "." + what
				}
				mentions(what, d.Type)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						mentions(s.Name.Name, exportedPart(s.Type))
					case *ast.ValueSpec:
						for i, n := range s.Names {
							if !n.IsExported() {
								continue
							}
							mentions(n.Name, s.Type)
							if i < len(s.Values) {
								mentions(n.Name, s.Values[i])
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// exportedPart is a type with a struct's or an interface's unexported members left out: those are not
// part of the API.
func exportedPart(e ast.Expr) ast.Expr {
	filter := func(fl *ast.FieldList) *ast.FieldList {
		if fl == nil {
			return nil
		}
		out := &ast.FieldList{}
		for _, f := range fl.List {
			keep := len(f.Names) == 0 // embedded: its name is its type's
			for _, n := range f.Names {
				keep = keep || n.IsExported()
			}
			if keep {
				out.List = append(out.List, f)
			}
		}
		return out
	}
	switch t := e.(type) {
	case *ast.StructType:
		return &ast.StructType{Fields: filter(t.Fields)}
	case *ast.InterfaceType:
		return &ast.InterfaceType{Methods: filter(t.Methods)}
	}
	return e
}

func receiverName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverName(t.X)
	case *ast.IndexExpr:
		return receiverName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}
