package metal

import "strings"

// chipPeaks are Apple GPUs' published FP16 (= FP32 ALU) peaks in TFLOP/s for the common core
// count of each chip, as tools/metalplan lists them with their sources (the lower figure where
// two are published). The device name does not say the core count, so a fraction of the peak
// computed from these is approximate; longest names first so "M4 Pro" is not read as "M4".
var chipPeaks = []struct {
	name  string
	tflop float64
}{
	{"M1 Ultra", 21.2}, {"M1 Max", 10.6}, {"M1 Pro", 5.3}, {"M1", 2.6},
	{"M2 Ultra", 27.2}, {"M2 Max", 13.6}, {"M2 Pro", 6.8}, {"M2", 3.6},
	{"M3 Pro", 6.4}, {"M3", 4.1},
	{"M4 Max", 14.1}, {"M4 Pro", 9.2}, {"M4", 3.58},
}

// PeakTFLOPS is the published FP16 peak of the Apple GPU named name (e.g. "Apple M4 Pro"), or 0
// when unknown (M3 Max and Ultra, M5, anything not an Apple M chip).
func PeakTFLOPS(name string) float64 {
	for _, c := range chipPeaks {
		i := strings.Index(name, c.name)
		if i < 0 {
			continue
		}
		rest := name[i+len(c.name):]
		if rest == "" || rest[0] == ' ' || rest[0] == ',' || rest[0] == ')' {
			// "Apple M3 Max" must not match "M3": the longer names come first, but "M3 Max" has
			// no entry, so check the word after the match too.
			if c.name == "M3" && strings.HasPrefix(strings.TrimSpace(rest), "Max") || c.name == "M3" && strings.HasPrefix(strings.TrimSpace(rest), "Ultra") {
				return 0
			}
			return c.tflop
		}
	}
	return 0
}
