package ui

import "runtime"

// hasMetal is whether this build can run on the GPU.
var hasMetal = runtime.GOOS == "darwin" && runtime.GOARCH == "arm64"
