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
// An image made from a start image (img2img, inpainting, outpainting) also carries that image and
// its mask, so dropping the PNG restores them: Settings.Init records the options and the files'
// names and SHA-256, and two private chunks hold copies as PNG files of their own — "eaIn" the
// start image (RGBA, as loaded: EXIF-oriented, before fitting) and "eaMk" the mask as painted or
// loaded (8-bit grey, white = repaint, before growing and feathering). Read decodes them into
// Settings.InitImage and Settings.MaskImage. Other tools skip private chunks.
//
// Files are written atomically: into a temporary file in the destination folder, synced, then
// renamed over the final name, so a full disk, an unwritable folder or a crash never leaves a
// partial image under the final name.
package imagefile

import (
	"fmt"
	"image"
	"time"
)

// Settings are the inputs of one generation, as stored in the "easel" chunk.
type Settings struct {
	Prompt         string  `json:"prompt"`
	NegativePrompt string  `json:"negative_prompt,omitempty"`
	Width          int     `json:"width"`
	Height         int     `json:"height"`
	Steps          int     `json:"steps"`
	CFG            float64 `json:"cfg"`
	Seed           uint64  `json:"seed"`
	// NoiseSeed is the seed the starting noise was drawn from when it is not Seed (an edit of an
	// image made with the same seed and size: compose's edit-seed rule); absent means Seed.
	NoiseSeed *uint64 `json:"noise_seed,omitempty"`
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
	// Origin is who asked for the image when it was not this app's window or CLI: "API host" for
	// a request to the HTTP API (app/serve).
	Origin string `json:"origin,omitempty"`
	// Idea is the short idea Expand turned into Prompt (empty: the prompt was written as is).
	Idea string `json:"idea,omitempty"`
	// Init is the start image's settings (nil: made from noise alone).
	Init *InitSettings `json:"init,omitempty"`
	// VariationSeed and VariationStrength are the variation seed the starting noise was moved
	// towards and how far (A1111's subseed; strength 0: none).
	VariationSeed     uint64  `json:"variation_seed,omitempty"`
	VariationStrength float64 `json:"variation_strength,omitempty"`
	// Hires, when not nil, is the second pass at a higher resolution the image went through;
	// Width, Height, Steps and Sigmas above are then the first pass's (A1111's convention), the
	// image itself is Hires.Width × Hires.Height.
	Hires *HiresSettings `json:"hires,omitempty"`
	// Batch, when not nil, places the image in the batch that made it (nil: a single image,
	// or a PNG written before batches were recorded).
	Batch *BatchSettings `json:"batch,omitempty"`
	// Upscale, when not nil, is a learned upscaler (or Lanczos) the finished image went through
	// afterwards (upscaled.go); the image itself is Upscale.Width × Upscale.Height.
	Upscale *UpscaleSettings `json:"upscale,omitempty"`
	// Grid, when not nil, marks a grid image and lists its axes (grid.go).
	Grid *GridSettings `json:"grid,omitempty"`
	// InitImage and MaskImage are the start image and its mask themselves, written to and read
	// from the "eaIn" and "eaMk" chunks (nil when absent).
	InitImage *image.NRGBA `json:"-"`
	MaskImage *image.Gray  `json:"-"`
}

// InitSettings say how an image was made from a start image: the start image and mask (by name
// and SHA-256 of the file's bytes, or of the pasted PNG), the denoising strength, the mask's
// grow and blur in pixels, the masked-area mode and its padding, whether the original was
// pasted back, and the canvas extension (left, top, right, bottom pixels).
type InitSettings struct {
	Image        ImageRef  `json:"image"`
	Strength     float64   `json:"strength"`
	Mask         *ImageRef `json:"mask,omitempty"`
	MaskBlur     float64   `json:"mask_blur,omitempty"`
	MaskGrow     int       `json:"mask_grow,omitempty"`
	MaskCrop     bool      `json:"mask_crop,omitempty"`
	CropPadding  int       `json:"mask_crop_padding,omitempty"`
	KeepOriginal bool      `json:"keep_original"`
	Extend       [4]int    `json:"extend,omitempty"`
	// Fit is how the start image was fitted to the output size: "cover" (cropped around its
	// centre) or "" (the size followed the image).
	Fit string `json:"fit,omitempty"`
	// CropOffset is how far that crop was moved off the centre, in the (extended) start image's
	// pixels, x then y (absent: centred, as every image made before it existed).
	CropOffset [2]int `json:"crop_offset,omitzero"`
}

// HiresSettings record a second pass at a higher resolution: the first pass's picture resized
// with Upscaler by Factor to Width × Height, then an image-to-image pass of Steps scheduled steps
// at Strength (StepsRun of them run, Sigmas walked) with the same prompt, condition images, LoRAs
// and seed.
type HiresSettings struct {
	Factor   float64   `json:"factor"`
	Width    int       `json:"width"`
	Height   int       `json:"height"`
	Strength float64   `json:"strength"`
	Steps    int       `json:"steps"`
	StepsRun int       `json:"steps_run"`
	Upscaler string    `json:"upscaler"`
	Sigmas   []float32 `json:"sigmas,omitempty"`
}

// BatchSettings place an image in its batch: ID is the same for every image of one batch and
// different for every batch (the history groups by it), Index is the image's place in the batch
// (0-based) and Count the batch's size. The image's own seed and variation are Settings.Seed and
// Settings.VariationSeed.
type BatchSettings struct {
	ID    string `json:"id"`
	Index int    `json:"index"`
	Count int    `json:"count"`
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

// NewBatchID is a batch's identity made from when it started, a serial number that tells apart
// batches started at the same moment (the window's job number; 0 for the CLI) and its base
// seed, so it is distinct for every batch one machine makes and readable in the PNG
// ("20261201T090000.123456789Z-3-seed7").
func NewBatchID(start time.Time, serial, seed uint64) string {
	return fmt.Sprintf("%s-%d-seed%d", start.UTC().Format("20060102T150405.000000000Z"), serial, seed)
}

// InBatch records that an image is image index of a batch of count (nothing for count below 2).
func (s *Settings) InBatch(id string, index, count int) {
	if count > 1 {
		s.Batch = &BatchSettings{ID: id, Index: index, Count: count}
	}
}
