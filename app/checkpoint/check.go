package checkpoint

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Check refuses a checkpoint made with another model file (by fingerprint) or other LoRAs (by
// SHA-256, in order, with their strengths), with a sentence that says what differs and what to do.
func (c *Checkpoint) Check(fingerprint string, loras []LoRA) error {
	if c.Model.Fingerprint != fingerprint {
		return fmt.Errorf("%w: it was made with the model file %s (fingerprint %.12s), and this one's is %.12s: resume it with that model (--model) or start the image again",
			ErrOther, c.Model.Path, c.Model.Fingerprint, fingerprint)
	}
	if len(loras) != len(c.LoRAs) {
		return fmt.Errorf("%w: it was made with %d LoRAs (%s), and %d are applied now: resume it with the same LoRAs",
			ErrOther, len(c.LoRAs), names(c.LoRAs), len(loras))
	}
	for i, l := range c.LoRAs {
		if loras[i].SHA256 != l.SHA256 || loras[i].Strength != l.Strength {
			return fmt.Errorf("%w: LoRA %d was %s (sha256 %.12s) at strength %g, and now %s (sha256 %.12s) at %g: put the original file back or start the image again",
				ErrOther, i+1, l.Path, l.SHA256, l.Strength, loras[i].Path, loras[i].SHA256, loras[i].Strength)
		}
	}
	return nil
}

func names(ls []LoRA) string {
	if len(ls) == 0 {
		return "none"
	}
	var n []string
	for _, l := range ls {
		n = append(n, filepath.Base(l.Path))
	}
	return strings.Join(n, ", ")
}
