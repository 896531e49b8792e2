// Package imagefile writes Easel's output images — RGBA PNGs, transparency kept — with the
// settings that made them embedded in the file, and reads those settings back (the history uses
// it), as well as the "parameters" text other tools write (ParseParameters). Two text chunks are written ahead of the pixels:
//
//   - "parameters", the AUTOMATIC1111 text other image tools read (PNG Info, ComfyUI and
//     Civitai importers, exiftool): the prompt, "Negative prompt: …", then one line of
//     "Steps: N, Sampler: …, CFG scale: …, Seed: …, Size: WxH, Model hash: …, Model: …";
//     a tEXt chunk when the text is Latin-1, else an iTXt chunk (UTF-8), as Pillow writes it;
//   - "easel", an iTXt chunk holding Settings as JSON: everything needed to make the image again.
//
// Files are written atomically: into a temporary file in the destination folder, synced, then
// renamed over the final name, so a full disk, an unwritable folder or a crash never leaves a
// partial image under the final name.
package imagefile

// Settings are the inputs of one generation, as stored in the "easel" chunk.
type Settings struct {
	Prompt         string  `json:"prompt"`
	NegativePrompt string  `json:"negative_prompt,omitempty"`
	Width          int     `json:"width"`
	Height         int     `json:"height"`
	Steps          int     `json:"steps"`
	CFG            float64 `json:"cfg"`
	Seed           uint64  `json:"seed"`
	// Sigmas is the schedule walked, terminal 0 included.
	Sigmas []float32 `json:"sigmas,omitempty"`
	// Resolution is the output_resolution condition images were sized for.
	Resolution int `json:"output_resolution,omitempty"`
	// Sampler names the sampler ("Euler": flow-matching Euler).
	Sampler string `json:"sampler"`
	// Model is the model file's name (not its path) and ModelHash a fingerprint of its content.
	Model     string `json:"model"`
	ModelHash string `json:"model_hash,omitempty"`
	// Images are the condition images, in order.
	Images []ImageRef `json:"condition_images,omitempty"`
	// LoRAs are the LoRAs the denoiser applied, in order.
	LoRAs []LoRARef `json:"loras,omitempty"`
	// EaselVersion is the version that made the image; Backend the backend it ran on.
	EaselVersion string `json:"easel_version"`
	Backend      string `json:"backend,omitempty"`
}

// LoRARef identifies one LoRA and its strength: the file's name (without its folder), the
// SHA-256 of the whole file (hex), and A1111's short hash (12 hex digits of the SHA-256 of the
// tensor bytes, lora.md §5), so other tools can match it too.
type LoRARef struct {
	Name      string  `json:"name"`
	SHA256    string  `json:"sha256"`
	ShortHash string  `json:"a1111_hash,omitempty"`
	Strength  float64 `json:"strength"`
}

// ImageRef identifies one condition image: its file name and the SHA-256 of its bytes (hex).
type ImageRef struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}
