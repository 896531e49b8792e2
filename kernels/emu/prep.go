// The pre-pass: a line-preserving, token-level rewrite of a .metal file so that it compiles as C++
// against include/metal_stdlib (adapted from the prototype's mslprep, docs/reference/msl-emu.md
// appendix C). No parsing beyond bracket depth:
//  1. [[buffer(0)]], [[thread_position_in_grid]], [[threadgroup(0)]] ... on parameters
//     -> [[msl_attr_buffer(0)]] ... (macros that turn them into default arguments)
//  2. kernel parameters without an attribute get [[msl_attr_buffer(k)]] (implicit index)
//  3. function-scope threadgroup objects (threadgroup float t[8][8];) get MSL_TG_STATIC, and a
//     call that fills them with 0xFF (NaN) when the first thread of a threadgroup reaches them
//  4. [[...]] after `template` (host_name) and inside typedefs are commented out
//  5. C-style casts to vector types, (float4)x, and casts through template type parameters,
//     (T)x and T(x), become conversions (MSL) instead of vector bit casts (clang)
//  6. half literals 1.0h -> half(1.0f)
//  7. `constant T x [[function_constant(i)]];` -> `MSL_FC_VAR T x;` (a zero-initialised global;
//     the Go API has no way to set function constants yet, and the kernels use none)
// It also collects the names of the non-template kernels, which become the library's entry table.

package emu

import (
	"fmt"
	"sort"
	"strings"
)

// attrs are the MSL kernel-parameter attributes the shim turns into default arguments.
var attrs = map[string]bool{
	"buffer": true, "threadgroup": true, "thread_position_in_grid": true,
	"thread_position_in_threadgroup": true, "threadgroup_position_in_grid": true,
	"threads_per_threadgroup": true, "threadgroups_per_grid": true, "threads_per_grid": true,
	"thread_index_in_threadgroup": true, "simdgroup_index_in_threadgroup": true,
	"thread_index_in_simdgroup": true, "threads_per_simdgroup": true, "thread_execution_width": true,
	"simdgroups_per_threadgroup": true, "quadgroup_index_in_threadgroup": true,
	"thread_index_in_quadgroup": true,
}

// isVecType reports whether s names an MSL vector type (float4, packed_half2, ...).
func isVecType(s string) bool {
	s = strings.TrimPrefix(s, "packed_")
	for _, b := range []string{"float", "half", "int", "uint", "short", "ushort", "char", "uchar", "bool", "long", "ulong"} {
		if s == b+"2" || s == b+"3" || s == b+"4" {
			return true
		}
	}
	return false
}

// tok is a token: src[s:e].
type tok struct{ s, e int }

// lex returns identifier, number and single-character punctuation tokens, skipping
// whitespace, comments, string/char literals and preprocessor lines.
func lex(src string) []tok {
	var ts []tok
	lineStart := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case lineStart && c == '#':
			for i < len(src) && !(src[i] == '\n' && src[i-1] != '\\') {
				i++
			}
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			if j := strings.Index(src[i+2:], "*/"); j < 0 {
				i = len(src)
			} else {
				i += j + 4
			}
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			ts = append(ts, tok{i, j + 1})
			i, lineStart = j+1, false
		default:
			lineStart = false
			j := i + 1
			if isIdent(c) || (c == '.' && j < len(src) && isDigit(src[j])) {
				for j < len(src) && (isIdent(src[j]) || (isDigit(c) || c == '.') && (src[j] == '.' ||
					(src[j] == '+' || src[j] == '-') && strings.ContainsRune("eEpP", rune(src[j-1])))) {
					j++
				}
			}
			ts = append(ts, tok{i, j})
			i = j
		}
	}
	return ts
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdent(c byte) bool { return c == '_' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') }

// edit replaces or inserts text in the source.
type edit struct {
	at, end int // replace src[at:end] (end == at: insert)
	text    string
}

// prepared is a .metal source rewritten for the emulator, with the names of its kernels.
type prepared struct {
	source  string   // C++ for clang, line-preserving, starting with #line 1 "<file>"
	kernels []string // non-template kernel functions, by their Metal names, in source order
}

// prepare rewrites the MSL source of file (used in diagnostics) so that it compiles as C++
// against include/metal_stdlib. See the package documentation of prep.go for the rewrites.
func prepare(file, src string) prepared {
	var kernels []string

	ts := lex(src)
	T := func(k int) string {
		if k < 0 || k >= len(ts) {
			return ""
		}
		return src[ts[k].s:ts[k].e]
	}
	isId := func(k int) bool { s := T(k); return s != "" && isIdent(s[0]) && !isDigit(s[0]) }
	// matching closer for an opener at k, counting () [] {} (and <> when angle is set)
	match := func(k int, angle bool) int {
		d := 0
		for j := k; j < len(ts); j++ {
			switch T(j) {
			case "(", "[", "{":
				d++
			case ")", "]", "}":
				d--
			case "<":
				if angle {
					d++
				}
			case ">":
				if angle {
					d--
				}
			}
			if d == 0 {
				return j
			}
		}
		return len(ts) - 1
	}
	tparams := map[string]bool{} // names declared as template type parameters anywhere in the file
	for k := 0; k+2 < len(ts); k++ {
		if (T(k) == "typename" || T(k) == "class") && isId(k+1) && (T(k+2) == "," || T(k+2) == ">" || T(k+2) == "=") && (T(k-1) == "<" || T(k-1) == ",") {
			tparams[T(k+1)] = true
		}
	}
	castType := func(k int) bool { return isVecType(T(k)) || tparams[T(k)] }
	var edits []edit
	comment := func(k int) int { // [[ at k: comment out the attribute list, return index of last ]
		e := match(k, false)
		edits = append(edits, edit{ts[k].s, ts[k].s + 2, "/*"}, edit{ts[e].e - 2, ts[e].e, "*/"})
		return e
	}
	inTypedef := -1 // token index of ; ending the current typedef
	for k := 0; k < len(ts); k++ {
		w := T(k)
		switch {
		case w == "typedef":
			for j := k; j < len(ts); j++ {
				if T(j) == ";" {
					inTypedef = j
					break
				}
			}
		case w == "[" && T(k+1) == "[" && T(k+2) == "function_constant":
			// constant T name [[function_constant(i)]];  ->  MSL_FC_VAR T name /*...*/;
			for j := k - 1; j >= 0 && !strings.Contains(";{}", T(j)); j-- {
				if T(j) == "constant" {
					edits = append(edits, edit{ts[j].s, ts[j].e, "MSL_FC_VAR"})
				}
			}
			k = comment(k)
		case w == "[" && T(k+1) == "[" && (T(k-1) == "template" || k < inTypedef):
			k = comment(k)
		case attrs[w] && T(k-1) == "[" && T(k-2) == "[":
			edits = append(edits, edit{ts[k].s, ts[k].s, "msl_attr_"})
		case isDigit(w[0]) && !strings.HasPrefix(strings.ToLower(w), "0x") && strings.HasSuffix(strings.ToLower(w), "h"):
			edits = append(edits, edit{ts[k].s, ts[k].e, halfLiteral(w)})
		case w == "(" && castType(k+1) && T(k+2) == ")" && (!isId(k-1) && T(k-1) != ")" && T(k-1) != "]" || T(k-1) == "return"):
			// C-style cast (vector or template type): MSL converts, clang would bit-cast vectors
			if n := T(k + 3); isId(k+3) || isDigit(n[0]) || n == "(" || n == "-" || n == "!" || n == "~" {
				edits = append(edits, edit{ts[k].s, ts[k+2].e, "::metal::detail::Cast<" + T(k+1) + ">{}->*"})
			}
		case tparams[w] && T(k+1) == "(" && T(k-1) != "::" && T(k-1) != ".":
			// functional cast through a template type parameter: T(x) -> conv<T>(x)
			edits = append(edits, edit{ts[k].s, ts[k].e, "::metal::detail::conv<" + w + ">"})
		case w == "threadgroup" && (k == 0 || strings.Contains(";{}", T(k-1))):
			obj := true // a declaration statement; pointer/reference declarators stay per-thread
			name, end := "", -1
			for j := k + 1; j < len(ts); j++ {
				s := T(j)
				if s == ";" {
					end = j
					break
				}
				if s == "(" || s == "[" || s == "{" {
					j = match(j, false)
				} else if s == "*" || s == "&" {
					obj = false
				} else if s == "=" || s == "," {
					name = "" // an initializer or several declarators: not poisoned
					end = -1
					break
				} else if isId(j) {
					name = s
				}
			}
			if obj {
				edits = append(edits, edit{ts[k].s, ts[k].s, "MSL_TG_STATIC "})
				if name != "" && end >= 0 {
					// threadgroup memory is undefined at group start: fill it with 0xFF (NaN) once per group
					edits = append(edits, edit{ts[end].e, ts[end].e, " ::msl_rt::tg_poison(&" + name + ", sizeof(" + name + "));"})
				}
			}
		case w == "kernel":
			// kernel <ret> name[<...>](params): give unattributed parameters a buffer index
			j := k + 1
			for j < len(ts) && T(j) != "(" && T(j) != ";" && T(j) != "{" {
				j++
			}
			if T(j) != "(" {
				break
			}
			if T(k-1) != "template" && isId(j-1) && T(j-2) == "void" {
				kernels = append(kernels, T(j-1))
			}
			end := match(j, false)
			var segs [][2]int
			used := map[int]bool{}
			for s, p := j+1, j+1; p <= end; p++ {
				if x := T(p); x == "(" || x == "[" || x == "{" || x == "<" {
					p = match(p, x == "<")
				} else if x == "," || p == end {
					segs = append(segs, [2]int{s, p})
					s = p + 1
				}
			}
			var plain []int
			for _, sg := range segs {
				has := false
				for p := sg[0]; p < sg[1]; p++ {
					if T(p) == "[" && T(p+1) == "[" {
						has = true
						if T(p+2) == "buffer" && T(p+3) == "(" {
							var n int
							if _, err := fmt.Sscanf(T(p+4), "%d", &n); err == nil {
								used[n] = true
							}
						}
					}
				}
				if !has && sg[1] > sg[0] && T(sg[0]) != "void" {
					plain = append(plain, sg[1])
				}
			}
			idx := 0
			for _, p := range plain {
				for used[idx] {
					idx++
				}
				used[idx] = true
				edits = append(edits, edit{ts[p-1].e, ts[p-1].e, fmt.Sprintf(" [[msl_attr_buffer(%d)]]", idx)})
			}
		}
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	var out strings.Builder
	fmt.Fprintf(&out, "#line 1 %q\n", file)
	pos := 0
	for _, e := range edits {
		out.WriteString(src[pos:e.at])
		out.WriteString(e.text)
		pos = e.end
	}
	out.WriteString(src[pos:])
	return prepared{source: out.String(), kernels: kernels}
}

// halfLiteral rewrites an MSL half literal (1.5h, 2h, 1e-3h) as a conversion from a float literal.
func halfLiteral(w string) string {
	num := w[:len(w)-1]
	if strings.ContainsAny(num, ".eE") {
		return "half(" + num + "f)"
	}
	return "half(" + num + ")"
}
