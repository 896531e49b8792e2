package textgen

import (
	"strings"
)

// The chat template of Qwen3-VL's instruct model (no thinking block): turns of
// "<|im_start|>role\n…<|im_end|>\n", then the assistant's turn opened for the model to write. An
// image in a user turn is "<|vision_start|><|image_pad|><|vision_end|>" before the text, its pad
// repeated once per merged vision token.

const (
	imStart     = "<|im_start|>"
	imEnd       = "<|im_end|>"
	visionStart = "<|vision_start|>"
	visionEnd   = "<|vision_end|>"
	imagePad    = "<|image_pad|>"
)

// chatText is a chat with an optional system turn and one user turn holding imagePads image pad
// tokens (0: no image) before text, ending in the opened assistant turn.
func chatText(system, user string, imagePads int) string {
	var b strings.Builder
	if system != "" {
		b.WriteString(imStart + "system\n" + system + imEnd + "\n")
	}
	b.WriteString(imStart + "user\n")
	if imagePads > 0 {
		b.WriteString(visionStart + strings.Repeat(imagePad, imagePads) + visionEnd)
	}
	b.WriteString(user + imEnd + "\n" + imStart + "assistant\n")
	return b.String()
}

// ExpandSystem is the instruction Expand gives the model: Qwen's guidance for rewriting short
// prompts for Qwen-Image (keep what the artist wrote, add what the image needs).
const ExpandSystem = "You rewrite a short idea into a detailed prompt for an image model. " +
	"Keep the subject, the language the idea is written in, and everything it states explicitly " +
	"(names, counts, colours, text to render, style). Add what the picture needs: composition and " +
	"framing, setting, light, materials and textures, colour palette, and style or medium. " +
	"Write one paragraph of plain description, under 120 words, with no preamble and no list."

// DescribeQuestion is Describe's default question.
const DescribeQuestion = "Describe this image as a prompt for an image model."
