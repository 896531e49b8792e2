package compose

import "strings"

// The wording Qwen recommends for RGBA output (spec §2): transparency is decided by the prompt.
const (
	transparentPrefix = "This is an RGBA image with transparency. "
	transparentSuffix = " The image has alpha channel and the background is transparent."
)

// WithTransparency wraps a description in Qwen's recommended RGBA prompt format:
// "This is an RGBA image with transparency. <description>. The image has alpha channel and the
// background is transparent."
func WithTransparency(description string) string {
	d := strings.TrimRight(strings.TrimSpace(description), ". ")
	return transparentPrefix + d + "." + transparentSuffix
}

// WithoutTransparency undoes WithTransparency, for restoring a draft from a stored prompt; ok is
// false when the prompt does not have the wording.
func WithoutTransparency(prompt string) (description string, ok bool) {
	d, ok1 := strings.CutPrefix(prompt, transparentPrefix)
	d, ok2 := strings.CutSuffix(d, transparentSuffix)
	if !ok1 || !ok2 {
		return prompt, false
	}
	return strings.TrimSuffix(d, "."), true
}
