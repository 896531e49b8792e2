package emu

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// headers is the metal_stdlib stand-in and the runtime, written next to the cached libraries.
//
//go:embed include
var headers embed.FS

// cxxFlags compile a prepared .metal file into a shared object. -fsycl-is-device is used only for
// its address-space rules (device/threadgroup/constant pointers do not convert into each other).
// -ffp-contract=off keeps a*b+c unfused, as written; explicit fma() is fused either way.
var cxxFlags = append([]string{
	"-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-pthread",
	"-Xclang", "-fsycl-is-device", "-ffp-contract=off", "-flax-vector-conversions=none",
	"-Wno-unknown-attributes", "-Wno-duplicate-decl-specifier",
}, cpuFlags()...)

// cpuFlags enables the instructions the emulator benefits from when this CPU has them: F16C for
// half conversions (else a libgcc call) and FMA for fma() and the simdgroup multiply (else a libm
// call, 5–10× slower). The results are identical either way.
func cpuFlags() []string {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return nil
	}
	var flags []string
	for _, line := range strings.Split(string(info), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) != "flags" {
			continue
		}
		have := strings.Fields(value)
		if slices.Contains(have, "f16c") {
			flags = append(flags, "-mf16c")
		}
		if slices.Contains(have, "fma") {
			flags = append(flags, "-mfma")
		}
		break
	}
	return flags
}

// tensorHeader marks a file that uses Metal 4's tensor types: its MetalPerformancePrimitives stand-in
// takes a class-type template argument, as Apple's header does, which needs C++20.
var tensorHeader = regexp.MustCompile(`(?m)^\s*#\s*include\s*<(metal_tensor|MetalPerformancePrimitives/)`)

// FastMathEnv, set to 1, compiles the kernels with clang's -ffast-math (finite math only,
// reassociation, contraction, approximate reciprocals), the nearest CPU stand-in for Metal's
// default fast math. The device compiles with fast math off (MTLMathModeSafe), as the emulator
// does by default; this switch is how that choice was made and can be re-checked: the parity tests
// run under it (docs/METAL.md, "One math mode").
const FastMathEnv = "EASEL_MSL_FAST_MATH"

// flagsFor returns cxxFlags for source, with -std=c++20 instead of c++17 when it includes the
// tensor headers (every other file keeps the flags, and so its cached build).
func flagsFor(source []byte) []string {
	flags := append([]string{}, cxxFlags...)
	if os.Getenv(FastMathEnv) == "1" {
		flags = append(flags, "-ffast-math")
	}
	if tensorHeader.Match(source) {
		for i, f := range flags {
			if f == "-std=c++17" {
				flags[i] = "-std=c++20"
			}
		}
	}
	return flags
}

// compiler builds kernel libraries with one clang++ into a content-addressed cache directory.
type compiler struct {
	path    string // clang++ executable
	version string // first line of --version, part of the cache key
	dir     string // cache directory
	include string // directory holding the headers
}

// findCompiler locates clang++ (EASEL_MSL_CXX, then clang++, then versioned names) and prepares
// the cache directory.
func findCompiler() (*compiler, error) {
	var candidates []string
	if env := os.Getenv("EASEL_MSL_CXX"); env != "" {
		candidates = []string{env}
	} else {
		candidates = []string{"clang++"}
		for v := 21; v >= 14; v-- {
			candidates = append(candidates, "clang++-"+strconv.Itoa(v))
		}
	}
	for _, name := range candidates {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		out, err := exec.Command(path, "--version").Output()
		if err != nil {
			continue
		}
		version, _, _ := strings.Cut(string(out), "\n")
		c := &compiler{path: path, version: version}
		if err := c.prepareCache(); err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, fmt.Errorf("looked for %s: %w", strings.Join(candidates, ", "), ErrNoCompiler)
}

// prepareCache creates the cache directory ($EASEL_MSL_CACHE, else <tmp>/easel-msl-emu-<uid>/) and
// writes the headers into a subdirectory named by their hash, so concurrent test processes and
// header edits never see a mixed set.
func (c *compiler) prepareCache() error {
	sum := sha256.New()
	err := fs.WalkDir(headers, "include", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := headers.ReadFile(path)
		fmt.Fprintf(sum, "%s %d\n", path, len(data))
		sum.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("read the emulator headers: %w", err)
	}
	c.dir = os.Getenv("EASEL_MSL_CACHE")
	if c.dir == "" {
		c.dir = filepath.Join(os.TempDir(), "easel-msl-emu-"+strconv.Itoa(os.Getuid()))
	}
	c.include = filepath.Join(c.dir, "include-"+hex.EncodeToString(sum.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(c.include, "metal_stdlib")); err == nil {
		return nil
	}
	staging, err := os.MkdirTemp(c.dir, ".include-")
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(c.dir, 0o755); err == nil {
			staging, err = os.MkdirTemp(c.dir, ".include-")
		}
	}
	if err != nil {
		return fmt.Errorf("create the emulator cache under %s: %w", os.TempDir(), err)
	}
	err = fs.WalkDir(headers, "include", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(staging, filepath.FromSlash(strings.TrimPrefix(path, "include")))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := headers.ReadFile(path)
		if err == nil {
			err = os.WriteFile(dst, data, 0o644)
		}
		return err
	})
	if err != nil {
		os.RemoveAll(staging)
		return fmt.Errorf("write the emulator headers to %s: %w", staging, err)
	}
	if err := os.Rename(staging, c.include); err != nil {
		os.RemoveAll(staging)
		if _, statErr := os.Stat(filepath.Join(c.include, "metal_stdlib")); statErr != nil {
			return fmt.Errorf("install the emulator headers in %s: %w", c.include, err)
		}
	}
	return nil
}

// translationUnit is the C++ clang compiles for one .metal file: the shim, the prepared source,
// and the table of kernels that msl_emu_entry.h exports.
func translationUnit(p prepared) string {
	var b strings.Builder
	b.WriteString("#include <metal_stdlib>\n")
	b.WriteString(p.source)
	b.WriteString("\n#line 1 \"<kernels/emu entry table>\"\n#include <msl_emu_end.h>\n#include <msl_emu_entry.h>\n")
	b.WriteString("extern const msl_rt::KernelEntry msl_emu_kernels[] = {\n")
	for _, k := range p.kernels {
		fmt.Fprintf(&b, "  {%q, [] { %s(); }},\n", k, k)
	}
	b.WriteString("  {nullptr, nullptr}};\n")
	return b.String()
}

// build returns the path of the shared object for the MSL source of file, compiling it unless
// the cache already holds it.
func (c *compiler) build(file string, source []byte) (string, error) {
	tu := translationUnit(prepare(file, string(source)))
	flags := flagsFor(source)
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\n%s\n%s\n", c.version, strings.Join(flags, " "), c.include)
	sum.Write([]byte(tu))
	key := hex.EncodeToString(sum.Sum(nil))[:24]
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	so := filepath.Join(c.dir, base+"-"+key+".so")
	if _, err := os.Stat(so); err == nil {
		return so, nil
	}
	// Unique names while building, so concurrent test processes never read a half-written file.
	tmp, err := os.CreateTemp(c.dir, ".build-"+base+"-*")
	if err != nil {
		return "", fmt.Errorf("create a build file in %s: %w", c.dir, err)
	}
	tmp.Close()
	os.Remove(tmp.Name())
	cpp, out := tmp.Name()+".cpp", tmp.Name()+".so"
	defer os.Remove(out)
	if err := os.WriteFile(cpp, []byte(tu), 0o644); err != nil {
		return "", fmt.Errorf("write %s for the emulator: %w", cpp, err)
	}
	// The translation unit stays next to the library for reading diagnostics and debugging.
	defer os.Rename(cpp, strings.TrimSuffix(so, ".so")+".cpp")
	args := append(append([]string{}, flags...), "-I", c.include, "-o", out, cpp)
	cmd := exec.Command(c.path, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("compile %s for the Metal emulator with %s failed (%v); fix the kernel source:\n%s",
			file, c.path, err, strings.TrimSpace(stderr.String()))
	}
	if err := os.Rename(out, so); err != nil {
		return "", fmt.Errorf("install %s: %w", so, err)
	}
	return so, nil
}
