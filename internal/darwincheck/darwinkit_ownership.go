package darwincheck

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// The darwinkit lint's ownership rules (over-releases, leaks) and the `//easel:keep` comment:
// see darwinkit.go.

// keepLines are the lines an `//easel:keep <reason>` comment covers: its own and the next.
func keepLines(fset *token.FileSet, f *ast.File) map[int]bool {
	lines := map[int]bool{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if rest, ok := strings.CutPrefix(c.Text, "//easel:keep"); ok && strings.TrimSpace(rest) != "" {
				line := fset.Position(c.Pos()).Line
				lines[line], lines[line+1] = true, true
			}
		}
	}
	return lines
}

func parentMap(root ast.Node) map[ast.Node]ast.Node {
	parents := map[ast.Node]ast.Node{}
	var stack []ast.Node
	ast.Inspect(root, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if len(stack) > 0 {
			parents[n] = stack[len(stack)-1]
		}
		stack = append(stack, n)
		return true
	})
	return parents
}

// releasedFields are the struct fields the package calls Release() on (`x.field.Release()`).
func releasedFields(p *kitPkg) map[*types.Var]bool {
	out := map[*types.Var]bool{}
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if c := callee(p.info, call); c == nil || !inPkg(c, objcPath) || c.Name() != "Release" {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				if inner, ok := ast.Unparen(sel.X).(*ast.SelectorExpr); ok {
					if v, ok := p.info.Uses[inner.Sel].(*types.Var); ok && v.IsField() {
						out[v] = true
					}
				}
			}
			return true
		})
	}
	return out
}

// owned reports whether the object call returns is released, returned or handed on (see the
// file comment).
func (l *kitLint) owned(p *kitPkg, fd *ast.FuncDecl, parents map[ast.Node]ast.Node, call *ast.CallExpr, released map[*types.Var]bool) bool {
	var n ast.Node = call
	parent := parents[n]
	for {
		if pe, ok := parent.(*ast.ParenExpr); ok {
			n, parent = pe, parents[pe]
			continue
		}
		break
	}
	switch par := parent.(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.KeyValueExpr:
		return par.Value == n && fieldReleased(p, par.Key, released)
	case *ast.AssignStmt:
		for i, r := range par.Rhs {
			if r == n && i < len(par.Lhs) {
				return l.targetOwned(p, fd, par.Lhs[i], released)
			}
		}
	case *ast.ValueSpec:
		for i, v := range par.Values {
			if v == n && i < len(par.Names) {
				return l.targetOwned(p, fd, par.Names[i], released)
			}
		}
	}
	return false
}

func fieldReleased(p *kitPkg, key ast.Expr, released map[*types.Var]bool) bool {
	id, ok := key.(*ast.Ident)
	if !ok {
		return false
	}
	v, ok := p.info.Uses[id].(*types.Var)
	return ok && released[v]
}

// targetOwned: the object was assigned to lhs; a field must be released by the package, a local
// variable released, returned, passed on to the module's own code or stored in such a field.
func (l *kitLint) targetOwned(p *kitPkg, fd *ast.FuncDecl, lhs ast.Expr, released map[*types.Var]bool) bool {
	switch x := ast.Unparen(lhs).(type) {
	case *ast.SelectorExpr:
		v, ok := p.info.Uses[x.Sel].(*types.Var)
		return ok && v.IsField() && released[v]
	case *ast.Ident:
		v, _ := p.info.Defs[x].(*types.Var)
		if v == nil {
			v, _ = p.info.Uses[x].(*types.Var)
		}
		if v == nil {
			return false
		}
		return localHandled(p, fd, v, released)
	}
	return false
}

func localHandled(p *kitPkg, fd *ast.FuncDecl, v *types.Var, released map[*types.Var]bool) bool {
	parents := parentMap(fd.Body)
	handled := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if handled || !ok || p.info.Uses[id] != v {
			return !handled
		}
		switch par := parents[id].(type) {
		case *ast.SelectorExpr: // v.Release() / v.Autorelease()
			if call, ok := parents[par].(*ast.CallExpr); ok && call.Fun == par {
				if c := callee(p.info, call); c != nil && inPkg(c, objcPath) && (c.Name() == "Release" || c.Name() == "Autorelease") {
					handled = true
				}
			}
		case *ast.ReturnStmt:
			handled = true
		case *ast.KeyValueExpr:
			handled = par.Value == id && fieldReleased(p, par.Key, released)
		case *ast.AssignStmt:
			for i, r := range par.Rhs {
				if r == id && i < len(par.Lhs) {
					if sel, ok := par.Lhs[i].(*ast.SelectorExpr); ok {
						if f, ok := p.info.Uses[sel.Sel].(*types.Var); ok && f.IsField() && released[f] {
							handled = true
						}
					}
				}
			}
		case *ast.CallExpr: // passed to a function of the module
			if c := callee(p.info, par); c != nil && c.Pkg() != nil && !isKitPath(c.Pkg().Path()) {
				for _, a := range par.Args {
					if a == id {
						handled = true
					}
				}
			}
		}
		return !handled
	})
	return handled
}

// checkRelease reports v.Release() of a local variable assigned from a darwinkit function that
// autoreleases its result, unless the function also retains v.
func (l *kitLint) checkRelease(p *kitPkg, fd *ast.FuncDecl, call *ast.CallExpr) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return
	}
	id, ok := ast.Unparen(sel.X).(*ast.Ident)
	if !ok {
		return
	}
	v, ok := p.info.Uses[id].(*types.Var)
	if !ok || v.IsField() {
		return
	}
	var from *types.Func
	retained := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			for i, lh := range x.Lhs {
				lid, ok := lh.(*ast.Ident)
				if !ok || i >= len(x.Rhs) || len(x.Lhs) != len(x.Rhs) {
					continue
				}
				if p.info.Defs[lid] != v && p.info.Uses[lid] != v {
					continue
				}
				if rc, ok := ast.Unparen(x.Rhs[i]).(*ast.CallExpr); ok {
					if c := callee(p.info, rc); c != nil && c.Pkg() != nil && isKitPath(c.Pkg().Path()) && !inPkg(c, objcPath) && l.summary(c).autoreleses {
						from = c
					}
				}
			}
		case *ast.CallExpr:
			if s, ok := x.Fun.(*ast.SelectorExpr); ok {
				if rid, ok := ast.Unparen(s.X).(*ast.Ident); ok && p.info.Uses[rid] == v {
					if c := callee(p.info, x); c != nil && inPkg(c, objcPath) && c.Name() == "Retain" {
						retained = true
					}
				}
			}
		}
		return true
	})
	if from != nil && !retained {
		l.report(call.Pos(), "%s is released, but %s already autoreleased it: the pool's drain would release freed memory; drop the Release",
			id.Name, name(from))
	}
}
