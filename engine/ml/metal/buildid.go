package metal

import (
	"crypto/sha256"
	"encoding/hex"
	"runtime/debug"
	"sort"
	"sync"

	"easel/kernels"
)

// BuildID is what, beside the device, the OS build and the app version, a cached self-test
// report, tuning choice or device policy is valid for: a digest of every embedded kernel source
// (each .metal file and shared .h fragment, as stored) and of the binary's VCS revision when the
// build recorded one. A fixed kernel or a rebuilt Easel at the same version thus misses the
// cache, so a failed first run is not remembered after the fix.
func BuildID() string { return buildIDOnce() }

var buildIDOnce = sync.OnceValue(func() string { return buildID(embeddedKernelFiles(), vcsRevision()) })

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
