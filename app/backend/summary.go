package backend

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"easel/engine/ml/metal"
)

// VariantInUse is the kernel variant of op class ("gemm", "attn") the denoiser runs under the
// choice r (nil: the baseline): the variable EASEL_METAL_VARIANT_<CLASS> when set, else r's.
func VariantInUse(r *metal.TuneReport, class string) string {
	if v := strings.TrimSpace(os.Getenv(metal.ForceEnv(class))); v != "" {
		return v + " (forced)"
	}
	return r.Chosen(class)
}

// FirstUseSummary is the Settings dialog's read-only account of the first Metal use on the
// device named dev, from the caches in the app-support folder dir: the GPU self-test's result
// (passed, or which kernels failed and which stages the CPU runs instead, and when it ran) and
// the kernel variants chosen per geometry class. "" when neither ran on dev.
func FirstUseSummary(dir, dev string) string {
	if dir == "" || dev == "" {
		return ""
	}
	var b strings.Builder
	st := metal.SelfTestCache{Dir: filepath.Join(dir, "selftest")}.Latest()
	if st != nil && st.Key.Device == dev {
		fmt.Fprintf(&b, "GPU self-test on %s (%s, %s): ", dev, st.Key.Model, when(st.When))
		if st.Passed() {
			fmt.Fprintf(&b, "passed, %d checks.", len(st.Results))
		} else {
			var failed []string
			for _, k := range st.Results {
				if !k.OK {
					failed = append(failed, k.Kernel+" ("+k.Error+")")
				}
			}
			var declined []string
			for _, stage := range []string{metal.StageTextEncoder, metal.StageDenoiser, metal.StageVAE} {
				if st.Decline(stage) != nil {
					declined = append(declined, "the "+stage)
				}
			}
			fmt.Fprintf(&b, "failed: %s. The CPU runs %s instead.", strings.Join(failed, "; "), strings.Join(declined, ", "))
		}
		if st.Guards != nil {
			fmt.Fprintf(&b, " Guards: %v.", *st.Guards)
		}
	}
	tuned := TunedFor(filepath.Join(dir, "tuning"), dev)
	if len(tuned) == 0 {
		if b.Len() == 0 {
			return ""
		}
		b.WriteString("\nKernel variants: not tuned yet (the baseline kernels run until a first job tunes them).")
		return b.String()
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	b.WriteString("Kernel variants chosen for this Mac:")
	for _, r := range tuned {
		var parts []string
		for _, c := range r.Choices {
			parts = append(parts, c.Class+": "+c.Variant)
		}
		fmt.Fprintf(&b, "\n  %s — %s (tuned %s)", r.Key.Geometry, strings.Join(parts, " · "), when(r.When))
	}
	return b.String()
}

func when(t time.Time) string { return t.Local().Format("2 Jan 2006 15:04") }
