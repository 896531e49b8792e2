// Package progress is how the window shows a job's progress and cost: the progress line under
// the canvas (stage, step i of N, seconds per step, time left), the meters, the chart of each
// step's time, and the timing panel (time and compute rate per kernel class, the GPU's time per
// stage, the sharp preview's share). It knows jobs and pipeline events, not the window: the
// shell tells it what happened.
package progress

import "runtime"

// hasMetal is whether this build can run on the GPU.
var hasMetal = runtime.GOOS == "darwin" && runtime.GOARCH == "arm64"
