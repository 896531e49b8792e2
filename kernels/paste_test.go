package kernels

import (
	"fmt"
	"strings"
	"testing"
)

func TestSourcePastesTheSharedFragment(t *testing.T) {
	frag, err := File("gemmtile.h")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gemm.metal", "ops.metal", "vae.metal"} {
		raw, err := File(name)
		if err != nil {
			t.Fatal(err)
		}
		src, err := Source(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(src), "\n") {
			if quotedInclude.MatchString(l) {
				t.Errorf("%s: line %d of Source is a quoted #include, which newLibraryWithSource cannot resolve", name, i+1)
			}
		}
		if n := strings.Count(string(src), string(frag)); n != 1 {
			t.Errorf("%s: Source holds gemmtile.h %d times, want once", name, n)
		}
		// The line after the include keeps its number: #line names it.
		lines := strings.Split(string(raw), "\n")
		at := -1
		for i, l := range lines {
			if l == `#include "gemmtile.h"` {
				at = i
			}
		}
		if at < 0 {
			t.Fatalf("%s does not include gemmtile.h", name)
		}
		want := "#line 1 \"gemmtile.h\"\n" + string(frag) + fmt.Sprintf("#line %d %q\n", at+2, name) + strings.Join(lines[at+1:], "\n")
		if !strings.HasSuffix(string(src), want) {
			t.Errorf("%s: the pasted fragment is not framed by #line directives naming gemmtile.h and then %s:%d", name, name, at+2)
		}
	}
	// A library without includes comes back as stored.
	raw, _ := File("swiglu.metal")
	src, err := Source("swiglu.metal")
	if err != nil || string(src) != string(raw) {
		t.Errorf("swiglu.metal changed by pasting (err %v)", err)
	}
}

func TestPasteRejectsWhatItCannotResolve(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"#include \"nothere.h\"\n", `x.metal:1 includes "nothere.h", which is not an embedded fragment`},
		{"a\n#include \"gemm.metal\"\n", `x.metal:2 includes "gemm.metal"; only the embedded fragments`},
	} {
		_, err := pasteFragments("x.metal", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("pasting %q: error %v, want one containing %q", c.src, err, c.want)
		}
	}
	if _, err := Source("nothere.metal"); err == nil || !strings.Contains(err.Error(), "gemmtile.h") {
		t.Errorf("Source of a missing file: %v, want an error listing the files and fragments", err)
	}
}
