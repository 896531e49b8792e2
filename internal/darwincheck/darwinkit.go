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
