package metal

import (
	"bytes"
	"maps"
	"strings"
	"testing"
)

// editedKernels is the embedded kernel sources with one byte of ops.metal changed, as a fix to a
// kernel would change it.
func editedKernels(t *testing.T) (orig, edited map[string][]byte) {
	t.Helper()
	orig = embeddedKernelFiles()
	src, ok := orig["ops.metal"]
	if !ok || len(orig) < 10 {
		t.Fatalf("embedded kernel files: %d, ops.metal present %v", len(orig), ok)
	}
	edited = map[string][]byte{}
	for n, b := range orig {
		edited[n] = b
	}
	e := bytes.Clone(src)
	e[len(e)/2] ^= 1
	edited["ops.metal"] = e
	return orig, edited
}

func TestBuildIDFollowsKernelSourcesAndRevision(t *testing.T) {
	orig, edited := editedKernels(t)
	base := buildID(orig, "abc")
	if BuildID() != buildID(buildFiles(), vcsRevision()) {
		t.Fatal("BuildID is not the digest of the embedded kernels, the Metal layer's Go sources and this build's revision")
	}
	if buildID(edited, "abc") == base {
		t.Fatal("a changed kernel source keeps the same build ID")
	}
	if buildID(orig, "abd") == base {
		t.Fatal("another revision keeps the same build ID")
	}
	if buildID(orig, "abc") != base {
		t.Fatal("the build ID is not deterministic")
	}
}

// TestBuildIDFollowsTheMetalLayersGoSources: the device's Go sources (compile options, the
// darwinkit calls) are digested with the kernels, so editing one changes the ID even when the
// revision stays "<rev>+modified".
func TestBuildIDFollowsTheMetalLayersGoSources(t *testing.T) {
	files := buildFiles()
	src, ok := files["engine/ml/metal/rawcalls_darwin.go"]
	if !ok || !bytes.Contains(src, []byte("setMathFloatingPointFunctions:")) {
		t.Fatalf("the digest does not cover the compile options' source (rawcalls_darwin.go present %v)", ok)
	}
	for n := range files {
		if strings.HasSuffix(n, "_test.go") {
			t.Errorf("a test file is digested: %s", n)
		}
	}
	edited := maps.Clone(files)
	edited["engine/ml/metal/rawcalls_darwin.go"] = bytes.Replace(src, []byte("mathFunctionsPrecise = 1"), []byte("mathFunctionsPrecise = 0"), 1)
	if bytes.Equal(edited["engine/ml/metal/rawcalls_darwin.go"], src) {
		t.Fatal("the edit did not apply")
	}
	if buildID(edited, "r+modified") == buildID(files, "r+modified") {
		t.Fatal("a changed Go source of the Metal layer keeps the same build ID")
	}
}

// TestCachesMissWhenAKernelSourceChanges: a self-test report, a tuning choice and a device policy
// written under one build are not read back under a build whose kernel sources differ.
func TestCachesMissWhenAKernelSourceChanges(t *testing.T) {
	orig, edited := editedKernels(t)
	before, after := buildID(orig, ""), buildID(edited, "")

	dir := t.TempDir()
	st := SelfTestCache{Dir: dir}
	key := SelfTestKey{Device: "Apple M4", OSBuild: "25A354", AppVersion: "1.0.0", Build: before, Model: "m.cmf", ModelSize: 1}
	if err := st.Save(&SelfTestReport{Key: key, Results: []KernelResult{{Kernel: "ops_linear", OK: false}}}); err != nil {
		t.Fatal(err)
	}
	if st.Load(key) == nil {
		t.Fatal("the self-test report is not read back under the same build")
	}
	key.Build = after
	if st.Load(key) != nil {
		t.Fatal("a self-test report written before a kernel changed is still used")
	}
	key.Build, key.OSBuild = before, "25B78"
	if st.Load(key) != nil {
		t.Fatal("a self-test report written before an OS update is still used")
	}

	tc := TuneCache{Dir: t.TempDir()}
	tk := TuneKey{Device: "Apple M4", OSBuild: "25A354", AppVersion: "1.0.0", Build: before, Geometry: "g"}
	if err := tc.Save(&TuneReport{Key: tk, Choices: []ClassChoice{{Class: "gemm", Variant: "swizzle"}}}); err != nil {
		t.Fatal(err)
	}
	if tc.Load(tk) == nil {
		t.Fatal("the tuning choice is not read back under the same build")
	}
	tk.Build = after
	if tc.Load(tk) != nil {
		t.Fatal("a tuning choice made before a kernel changed is still used")
	}
	tk.Build, tk.OSBuild = before, "25B78"
	if tc.Load(tk) != nil {
		t.Fatal("a tuning choice made before an OS update is still used")
	}

	pdir := t.TempDir()
	p := &DevicePolicy{}
	p.Persist(pdir, "25A354", "1.0.0")
	p.build = before
	p.Remember("Apple M4", "denoiser", 2)
	same := &DevicePolicy{}
	same.Persist(pdir, "25A354", "1.0.0")
	same.build = before
	if same.Level("Apple M4", "denoiser") != 2 {
		t.Fatal("the device policy is not read back under the same build")
	}
	changed := &DevicePolicy{}
	changed.Persist(pdir, "25A354", "1.0.0")
	changed.build = after
	if l := changed.Level("Apple M4", "denoiser"); l != 0 {
		t.Fatalf("a device policy learned before a kernel changed is still used (level %d)", l)
	}
}
