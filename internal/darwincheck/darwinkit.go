package darwincheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// The darwinkit lint (Options.Darwinkit). darwinkit's generated wrappers compile for any
// argument, but three things they do are only visible in their bodies, so this reads darwinkit's
// own source of every wrapper the module calls (the same type-checked syntax darwin-check builds)
// and reports each call from the module that:
//
//   - wraps: goes into a wrapper whose body (or a darwinkit function it calls) calls
//     objc.WrapAsProtocol. For a struct argument (metal.BufferObject, …) that panics "generic
//     type T should be interface type" on every call; for an interface argument it hands
//     Metal a Go-built adaptor object instead of Metal's own. Call the `…Object` variant or
//     objc.Call with the object itself.
//   - over-releases: calls Release() on a variable assigned from a darwinkit constructor whose
//     body autoreleases what it returns (Class.New(): `new` + Autorelease), with no Retain() of
//     it in the same function: the pool's drain would then release freed memory.
//   - leaks: takes an object from an alloc/new/copy/mutableCopy selector (objc.Call with such an
//     objc.Sel literal, or a wrapper whose body sends one and does not autorelease it) and
//     never releases it: the result is discarded or used inline, or kept in a local variable
//     that is neither released, returned, passed to a function of the module, nor stored in a
//     field that the package releases somewhere (`x.field.Release()`).
//
//   - slice-result: reads a result as a Go slice through objc.Call[[]T] (T not byte), directly or
//     in the wrapper's body. darwinkit converts the NSArray with to_c_array
//     (objc/type_convertion.m), which leaves the length uninitialised for an empty array, and
//     Metal returns empty arrays (no underlying errors, no counter sets): the slice then has a
//     garbage length. Take the raw object (objc.Call[objc.Object]) and read it through a helper
//     that asks `count` first.
//   - narrow-result: reads a result narrower than 8 bytes (BOOL, int32, …) through objc.Call,
//     directly or in the wrapper's body. objc.Call hands libffi the Go variable as the return
//     buffer, and libffi writes a whole ffi_arg (8 bytes) for a small integer result: the bytes
//     after a 1-byte bool are overwritten. Call objc.Call[uint64] (or [int64]) and narrow the
//     value in Go, or send the message from a small Objective-C shim. (Responds-to checks,
//     objc.Object.RespondsToSelector and the Has… wrappers over it, go through cgo, not libffi.)
//
// An object kept on purpose for the life of the process (the command queue, compiled
// libraries and pipelines, pooled sample buffers) is marked with a `//easel:keep <why>` comment
// on the call's line or the line above it; the reason is required.

const kitPath = "github.com/progrium/darwinkit"

func isKitPath(path string) bool { return path == kitPath || strings.HasPrefix(path, kitPath+"/") }

const objcPath = kitPath + "/objc"

type kitPkg struct {
	path   string
	module bool // a package of the module being checked (else darwinkit's own)
	files  []*ast.File
	info   *types.Info
}

// kitSummary is what a darwinkit function's body does, transitively through the darwinkit
// functions it calls (objc's own functions are the primitives and are not entered).
type kitSummary struct {
	wraps       token.Pos // a call of objc.WrapAsProtocol; NoPos if none
	autoreleses bool      // calls Autorelease
	selectors   []string  // objc.Sel literals it sends through objc.Call
	slice       string    // the first objc.Call[[]T] result it reads (T not byte); "" if none
	narrow      string    // the first objc.Call result narrower than 8 bytes it reads; "" if none
}

// owning reports whether a selector returns an object the caller owns (Cocoa's naming rule).
func owning(sel string) bool {
	for _, p := range []string{"alloc", "new", "copy", "mutableCopy"} {
		if rest, ok := strings.CutPrefix(sel, p); ok {
			if rest == "" || !(rest[0] >= 'a' && rest[0] <= 'z') {
				return true
			}
		}
	}
	return false
}

func (s *kitSummary) plusOne() bool {
	if s.autoreleses {
		return false
	}
	for _, sel := range s.selectors {
		if owning(sel) {
			return true
		}
	}
	return false
}

type kitLint struct {
	fset     *token.FileSet
	pkgs     []*kitPkg
	decls    map[*types.Func]*ast.FuncDecl
	declInfo map[*types.Func]*types.Info
	sums     map[*types.Func]*kitSummary
	findings map[string]bool
	calls    map[token.Pos]bool // the module's calls into darwinkit examined (a package and its test variant share positions)
}

func newKitLint(fset *token.FileSet) *kitLint {
	return &kitLint{fset: fset, decls: map[*types.Func]*ast.FuncDecl{}, declInfo: map[*types.Func]*types.Info{},
		sums: map[*types.Func]*kitSummary{}, findings: map[string]bool{}, calls: map[token.Pos]bool{}}
}

func (l *kitLint) add(path string, module bool, files []*ast.File, info *types.Info) {
	l.pkgs = append(l.pkgs, &kitPkg{path: path, module: module && !isKitPath(path), files: files, info: info})
	if !isKitPath(path) {
		return
	}
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				if fn, ok := info.Defs[fd.Name].(*types.Func); ok {
					l.decls[fn] = fd
					l.declInfo[fn] = info
				}
			}
		}
	}
}

// callee is the function or method a call invokes, its generic origin; nil for conversions,
// builtins and calls of function values.
func callee(info *types.Info, call *ast.CallExpr) *types.Func {
	fun := ast.Unparen(call.Fun)
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun = f.X
	case *ast.IndexListExpr:
		fun = f.X
	}
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return nil
	}
	fn, _ := info.Uses[id].(*types.Func)
	if fn != nil {
		fn = fn.Origin()
	}
	return fn
}

func inPkg(fn *types.Func, path string) bool { return fn.Pkg() != nil && fn.Pkg().Path() == path }

// selLiteral is the selector of objc.Call(o, objc.Sel("literal"), …); "" when not a literal.
func selLiteral(info *types.Info, call *ast.CallExpr) string {
	if len(call.Args) < 2 {
		return ""
	}
	sc, ok := ast.Unparen(call.Args[1]).(*ast.CallExpr)
	if !ok || len(sc.Args) != 1 {
		return ""
	}
	if fn := callee(info, sc); fn == nil || !inPkg(fn, objcPath) || fn.Name() != "Sel" {
		return ""
	}
	lit, ok := sc.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING || len(lit.Value) < 2 {
		return ""
	}
	return lit.Value[1 : len(lit.Value)-1]
}

// summary reads fn's body (memoized; a cycle contributes nothing).
func (l *kitLint) summary(fn *types.Func) *kitSummary {
	if s, ok := l.sums[fn]; ok {
		return s
	}
	s := &kitSummary{}
	l.sums[fn] = s
	decl, info := l.decls[fn], l.declInfo[fn]
	if decl == nil {
		return s
	}
	ast.Inspect(decl.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		c := callee(info, call)
		if c == nil || c.Pkg() == nil || !isKitPath(c.Pkg().Path()) {
			return true
		}
		if inPkg(c, objcPath) {
			switch c.Name() {
			case "WrapAsProtocol":
				if s.wraps == token.NoPos {
					s.wraps = call.Pos()
				}
			case "Autorelease":
				s.autoreleses = true
			case "Call":
				if sel := selLiteral(info, call); sel != "" {
					s.selectors = append(s.selectors, sel)
				}
				slice, narrow := unsafeResult(info, call)
				if s.slice == "" {
					s.slice = slice
				}
				if s.narrow == "" {
					s.narrow = narrow
				}
			}
			return true
		}
		if c != fn {
			sub := l.summary(c)
			if s.wraps == token.NoPos {
				s.wraps = sub.wraps
			}
			if s.slice == "" {
				s.slice = sub.slice
			}
			if s.narrow == "" {
				s.narrow = sub.narrow
			}
			s.autoreleses = s.autoreleses || sub.autoreleses
			s.selectors = append(s.selectors, sub.selectors...)
		}
		return true
	})
	return s
}

// callTypeArg is the type argument of a call of the generic objc.Call, nil if it has none.
func callTypeArg(info *types.Info, call *ast.CallExpr) types.Type {
	fun := ast.Unparen(call.Fun)
	if ix, ok := fun.(*ast.IndexExpr); ok {
		fun = ix.X
	}
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return nil
	}
	inst, ok := info.Instances[id]
	if !ok || inst.TypeArgs == nil || inst.TypeArgs.Len() != 1 {
		return nil
	}
	return inst.TypeArgs.At(0)
}

// unsafeResult says how a call of objc.Call reads its result unsafely: slice is the type of a
// slice result other than []byte (an NSArray through to_c_array), narrow the type of an integer
// or bool result narrower than 8 bytes (libffi writes 8); "" when it does not.
func unsafeResult(info *types.Info, call *ast.CallExpr) (slice, narrow string) {
	t := callTypeArg(info, call)
	if t == nil {
		return "", ""
	}
	switch u := t.Underlying().(type) {
	case *types.Slice:
		if b, ok := u.Elem().Underlying().(*types.Basic); ok && (b.Kind() == types.Byte || b.Kind() == types.Uint8) {
			return "", "" // NSData through to_c_bytes, which sets the length
		}
		return types.TypeString(t, shortQualifier), ""
	case *types.Basic:
		switch u.Kind() {
		case types.Bool, types.Int8, types.Int16, types.Int32, types.Uint8, types.Uint16, types.Uint32:
			return "", types.TypeString(t, shortQualifier)
		}
	}
	return "", ""
}

func shortQualifier(p *types.Package) string { return p.Name() }

// Finding phrases of the two result rules (the tests look for them).
const (
	sliceResultPhrase  = "reads an NSArray result as a Go slice"
	narrowResultPhrase = "reads a result narrower than 8 bytes through libffi"
)

func (l *kitLint) reportResults(pos token.Pos, what, slice, narrow string) {
	if slice != "" {
		l.report(pos, "%s %s (%s): darwinkit's to_c_array leaves the length uninitialised for an empty array; "+
			"take the raw object (objc.Call[objc.Object]) and read it with a helper that asks count first", what, sliceResultPhrase, slice)
	}
	if narrow != "" {
		l.report(pos, "%s %s (%s): libffi writes a whole 8-byte ffi_arg into the Go result; "+
			"call objc.Call[uint64] and narrow it in Go, or send the message from an Objective-C shim", what, narrowResultPhrase, narrow)
	}
}

func (l *kitLint) report(pos token.Pos, format string, args ...any) {
	l.findings[fmt.Sprintf("%s: %s", l.fset.Position(pos), fmt.Sprintf(format, args...))] = true
}

func (l *kitLint) run() []string {
	for _, p := range l.pkgs {
		if p.module {
			l.checkPackage(p)
		}
	}
	out := make([]string, 0, len(l.findings))
	for f := range l.findings {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

func name(fn *types.Func) string {
	if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil {
		t := sig.Recv().Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := t.(*types.Named); ok {
			return fn.Pkg().Name() + "." + n.Obj().Name() + "." + fn.Name()
		}
	}
	return fn.Pkg().Name() + "." + fn.Name()
}

func (l *kitLint) checkPackage(p *kitPkg) {
	released := releasedFields(p)
	for _, f := range p.files {
		keep := keepLines(l.fset, f)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			parents := parentMap(fd.Body)
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				c := callee(p.info, call)
				if c == nil || c.Pkg() == nil || !isKitPath(c.Pkg().Path()) {
					return true
				}
				l.calls[call.Pos()] = true
				var plusOne bool
				var what string
				if inPkg(c, objcPath) && c.Name() == "Call" {
					sel := selLiteral(p.info, call)
					plusOne, what = owning(sel), fmt.Sprintf("objc.Call of %q", sel)
					slice, narrow := unsafeResult(p.info, call)
					l.reportResults(call.Pos(), what, slice, narrow)
				} else if inPkg(c, objcPath) && c.Name() == "Release" {
					l.checkRelease(p, fd, call)
					return true
				} else {
					s := l.summary(c)
					what = name(c)
					if s.wraps != token.NoPos {
						l.report(call.Pos(), "%s passes its argument through objc.WrapAsProtocol (%s): it panics for a struct "+
							"argument and hands Metal a Go adaptor for an interface; call the …Object variant or objc.Call with the object itself",
							what, l.fset.Position(s.wraps))
					}
					plusOne = s.plusOne()
					l.reportResults(call.Pos(), what, s.slice, s.narrow)
				}
				if plusOne && !keep[l.fset.Position(call.Pos()).Line] && !l.owned(p, fd, parents, call, released) {
					l.report(call.Pos(), "%s returns an object the caller owns (an alloc/new/copy selector) and it is never released: "+
						"release it once, return it, or store it in a field the package releases (or mark a lifelong one `//easel:keep <why>`)", what)
				}
				return true
			})
		}
	}
}

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
