package kernels

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// quotedInclude matches a line `#include "name"`: a shared fragment, not a system header.
var quotedInclude = regexp.MustCompile(`^\s*#\s*include\s*"([^"]*)"\s*(//.*)?$`)

// pasteFragments replaces every `#include "x.h"` line of the library file name with the embedded
// fragment x.h, preceded by `#line 1 "x.h"` and followed by `#line n "name"` (n the line after the
// include), so a compiler's diagnostics name the file and line the text came from. A fragment
// must not include another one, and must be an embedded .h file.
func pasteFragments(name string, src []byte) ([]byte, error) {
	var out bytes.Buffer
	lines := strings.SplitAfter(string(src), "\n")
	for i, line := range lines {
		m := quotedInclude.FindStringSubmatch(strings.TrimRight(line, "\r\n"))
		if m == nil {
			out.WriteString(line)
			continue
		}
		frag := m[1]
		if !strings.HasSuffix(frag, ".h") {
			return nil, fmt.Errorf("kernels: %s:%d includes %q; only the embedded fragments %v can be included", name, i+1, frag, Fragments())
		}
		text, err := sources.ReadFile(frag)
		if err != nil {
			return nil, fmt.Errorf("kernels: %s:%d includes %q, which is not an embedded fragment (have %v)", name, i+1, frag, Fragments())
		}
		for j, fl := range strings.Split(string(text), "\n") {
			if quotedInclude.MatchString(strings.TrimRight(fl, "\r")) {
				return nil, fmt.Errorf("kernels: fragment %s:%d includes another fragment; paste its text into %s instead", frag, j+1, frag)
			}
		}
		fmt.Fprintf(&out, "#line 1 %q\n", frag)
		out.Write(text)
		if len(text) > 0 && text[len(text)-1] != '\n' {
			out.WriteByte('\n')
		}
		fmt.Fprintf(&out, "#line %d %q\n", i+2, name)
	}
	return out.Bytes(), nil
}
