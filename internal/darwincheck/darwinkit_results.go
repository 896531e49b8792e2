package darwincheck

import (
	"go/ast"
	"go/token"
	"go/types"
)

// The darwinkit lint's two result rules (slice-result, narrow-result): see darwinkit.go.

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
