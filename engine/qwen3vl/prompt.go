package qwen3vl

import (
	"fmt"
	"slices"
	"strings"

	"easel/engine/tokenizer"
)

// This file builds the text encoder's input from the user's prompt (spec §1): the pipeline's
// chat template around the prompt, one <|image_pad|> run per condition image, tokenized as the
// Qwen3-VL processor does, with the count of leading system-turn rows the pipeline drops.

// SystemPrompt is the system turn of both templates.
const SystemPrompt = "Comprehend and analyze the provided prompt."

const (
	systemTurn    = "<|im_start|>system\n" + SystemPrompt + "<|im_end|>\n"
	userTurnStart = "<|im_start|>user\n"
	userTurnEnd   = "<|im_end|>\n<|im_start|>assistant\n"
	imagePadToken = "<|image_pad|>"
)

// Prompt is one prompt ready for Encoder.Encode.
type Prompt struct {
	// IDs is the whole template tokenized, each image's <|image_pad|> expanded to its token count.
	IDs []int32
	// Drop is how many leading rows of the encoder output the pipeline discards: the tokens of
	// the system turn (14 with Qwen's tokenizer), computed by tokenizing it.
	Drop int
	// ImageMask marks, for the rows kept after Drop, the <|image_pad|> rows (the denoiser puts
	// condition-image latents there).
	ImageMask []bool
}

// PromptText is the string the pipeline hands the processor for a prompt and n condition
// images, before the processor expands the image pads: the text-to-image template when n = 0,
// else the image-editing one with "<image1><|vision_start|><|image_pad|><|vision_end|>" and, from
// the second image on, the same segment preceded by a space (" <image2>…"). An empty prompt
// becomes a single space, as the pipeline does (Qwen has no BOS token).
func PromptText(prompt string, n int) string {
	return promptText(prompt, slices.Repeat([]int{1}, max(n, 0)))
}

// promptText is PromptText with image i's <|image_pad|> repeated imagePads[i] times.
func promptText(prompt string, imagePads []int) string {
	if prompt == "" {
		prompt = " "
	}
	var b strings.Builder
	b.WriteString(systemTurn)
	b.WriteString(userTurnStart)
	for i, pads := range imagePads {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "<image%d><|vision_start|>", i+1)
		b.WriteString(strings.Repeat(imagePadToken, pads))
		b.WriteString("<|vision_end|>")
	}
	b.WriteString(prompt)
	b.WriteString(userTurnEnd)
	return b.String()
}

// ImagePadCount is how many <|image_pad|> tokens one image occupies in the prompt: its patch grid
// (image_grid_thw = t, h, w) divided by the merge window (mergeSize², 4 for Qwen3-VL).
func ImagePadCount(gridTHW [3]int, mergeSize int) (int, error) {
	patches := gridTHW[0] * gridTHW[1] * gridTHW[2]
	window := mergeSize * mergeSize
	if patches <= 0 || window <= 0 || patches%window != 0 {
		return 0, fmt.Errorf("image grid %v does not divide into %d×%d merge windows", gridTHW, mergeSize, mergeSize)
	}
	return patches / window, nil
}

// BuildPrompt tokenizes the prompt in its template. imagePads holds, per condition image in
// order, its <|image_pad|> count (ImagePadCount); nil or empty for text-to-image.
func BuildPrompt(tok *tokenizer.Tokenizer, prompt string, imagePads []int) (Prompt, error) {
	padID, ok := tok.TokenID(imagePadToken)
	if !ok {
		return Prompt{}, fmt.Errorf("prompt: the tokenizer has no %s token: it is not a Qwen-VL tokenizer", imagePadToken)
	}
	for i, n := range imagePads {
		if n <= 0 {
			return Prompt{}, fmt.Errorf("prompt: condition image %d has %d image tokens: want at least 1", i+1, n)
		}
	}
	ids := tok.Encode(promptText(prompt, imagePads))
	system := tok.Encode(systemTurn)
	if len(system) > len(ids) || !slices.Equal(ids[:len(system)], system) {
		return Prompt{}, fmt.Errorf("prompt: the system turn does not tokenize to a prefix of the prompt: the tokenizer merges across it")
	}
	p := Prompt{IDs: make([]int32, len(ids)), Drop: len(system), ImageMask: make([]bool, len(ids)-len(system))}
	pads := 0
	for i, id := range ids {
		p.IDs[i] = int32(id)
		if id == padID {
			pads++
			if i >= p.Drop {
				p.ImageMask[i-p.Drop] = true
			}
		}
	}
	want := 0
	for _, n := range imagePads {
		want += n
	}
	if pads != want {
		return Prompt{}, fmt.Errorf("prompt: %d image tokens after tokenizing, want %d: the prompt text itself contains %s; remove it", pads, want, imagePadToken)
	}
	return p, nil
}
