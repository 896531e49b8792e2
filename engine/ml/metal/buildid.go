package metal

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"maps"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"easel/kernels"
)

// BuildID is what, beside the device, the OS build and the app version, a cached self-test
// report, tuning choice or device policy is valid for: a digest of every embedded kernel source
// (each .metal file and shared .h fragment, as stored), of this package's Go sources (the device
// over darwinkit and its compile options: metalLayerFiles) and of the binary's VCS revision when
// the build recorded one. A fixed kernel, a changed compile option or a rebuilt Easel at the same
// version thus misses the cache, so a failed first run is not remembered after the fix, and two
// uncommitted trees (the same "<rev>+modified") with different Metal code do not share one.
// The OS build is a field of every key beside it, so an OS update runs the self-test again.
func BuildID() string { return buildIDOnce() }

var buildIDOnce = sync.OnceValue(func() string { return buildID(buildFiles(), vcsRevision()) })

// buildFiles are the files BuildID digests: the kernel sources and the Metal layer's Go sources.
func buildFiles() map[string][]byte {
	files := embeddedKernelFiles()
	maps.Copy(files, metalLayerFiles())
	return files
}

// layerSources are this package's Go files, compiled into the binary only as bytes to digest.
//
//go:embed *.go
var layerSources embed.FS

// metalLayerFiles are this package's Go sources, tests left out, named "engine/ml/metal/<file>".
func metalLayerFiles() map[string][]byte {
	files := map[string][]byte{}
	names, _ := fs.Glob(layerSources, "*.go")
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		if b, err := layerSources.ReadFile(n); err == nil {
			files["engine/ml/metal/"+n] = b
		}
	}
	return files
}

// buildID digests files (name → text) and the revision: 24 hex digits.
func buildID(files map[string][]byte, revision string) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(files[n])
		h.Write([]byte{0})
	}
	h.Write([]byte("revision\x00" + revision))
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// embeddedKernelFiles are the kernel sources compiled into this binary.
func embeddedKernelFiles() map[string][]byte {
	files := map[string][]byte{}
	for _, n := range append(kernels.Names(), kernels.Fragments()...) {
		if b, err := kernels.File(n); err == nil {
			files[n] = b
		}
	}
	return files
}

// vcsRevision is the build's vcs.revision (with "+modified" for a dirty tree), "" when the
// binary was built without VCS stamping.
func vcsRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	return rev + modified
}
