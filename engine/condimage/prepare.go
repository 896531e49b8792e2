package condimage

import (
	"encoding/json"
	"fmt"
	"image"
	"os"
)

// This file is the condition-image path of the pipeline (spec §3): one Pillow-exact Lanczos resize
// of the RGBA image to the condition size, then two copies — the VAE's RGBA tensor in [−1, 1], and
// the vision tower's rows, made from the resized image composited over white.

// ImageProcessorConfig is the image half of a Qwen3-VL processor config: how condition images are
// cut into vision-tower patches and normalised.
type ImageProcessorConfig struct {
	PatchSize         int        // pixels per patch side (16)
	TemporalPatchSize int        // frames per patch (2); a still image is repeated
	MergeSize         int        // patches per merge-window side (2)
	MinPixels         int        // smart_resize lower bound on H·W (size.shortest_edge)
	MaxPixels         int        // smart_resize upper bound on H·W (size.longest_edge)
	DoRescale         bool       // multiply bytes by RescaleFactor
	RescaleFactor     float64    // 1/255
	DoNormalize       bool       // then (x − mean)/std per channel
	ImageMean         [3]float64 // per RGB channel
	ImageStd          [3]float64 // per RGB channel
}

// DefaultImageProcessorConfig is the stock Qwen3-VL image processor (spec §3.2), used when a model
// snapshot has no processor config.
func DefaultImageProcessorConfig() ImageProcessorConfig {
	return ImageProcessorConfig{PatchSize: 16, TemporalPatchSize: 2, MergeSize: 2,
		MinPixels: 65536, MaxPixels: 16777216, DoRescale: true, RescaleFactor: 1.0 / 255,
		DoNormalize: true, ImageMean: [3]float64{0.5, 0.5, 0.5}, ImageStd: [3]float64{0.5, 0.5, 0.5}}
}

// PatchRowLength is the length of one pixel_values row: 3 channels × frames × patch × patch (1536).
func (p ImageProcessorConfig) PatchRowLength() int {
	return 3 * p.TemporalPatchSize * p.PatchSize * p.PatchSize
}

// imageProcessorJSON mirrors the fields of a Hugging Face (pre)processor config we use.
type imageProcessorJSON struct {
	PatchSize         *int      `json:"patch_size"`
	TemporalPatchSize *int      `json:"temporal_patch_size"`
	MergeSize         *int      `json:"merge_size"`
	MinPixels         *int      `json:"min_pixels"`
	MaxPixels         *int      `json:"max_pixels"`
	DoRescale         *bool     `json:"do_rescale"`
	RescaleFactor     *float64  `json:"rescale_factor"`
	DoNormalize       *bool     `json:"do_normalize"`
	ImageMean         []float64 `json:"image_mean"`
	ImageStd          []float64 `json:"image_std"`
	Size              *struct {
		ShortestEdge *int `json:"shortest_edge"`
		LongestEdge  *int `json:"longest_edge"`
	} `json:"size"`
}

// LoadImageProcessorConfig reads a processor_config.json (image settings under "image_processor")
// or a preprocessor_config.json (image settings at the top level). Missing fields keep the stock
// Qwen3-VL values; size.shortest_edge/longest_edge win over the older min_pixels/max_pixels.
func LoadImageProcessorConfig(path string) (ImageProcessorConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return DefaultImageProcessorConfig(), fmt.Errorf("reading the image processor config: %w", err)
	}
	return ParseImageProcessorConfig(data, path)
}

// ImageProcessorTensor is the model-file blob holding the snapshot's processor config (written by
// engine/convert; cortiq's files lack it, and then the stock settings apply).
const ImageProcessorTensor = "qi21.processor_json"

// ParseImageProcessorConfig reads the same JSON as LoadImageProcessorConfig from bytes; source
// names where they came from in error messages (a path, or the model file's blob).
func ParseImageProcessorConfig(data []byte, source string) (ImageProcessorConfig, error) {
	path := source
	cfg := DefaultImageProcessorConfig()
	var outer struct {
		ImageProcessor *json.RawMessage `json:"image_processor"`
	}
	if err := json.Unmarshal(data, &outer); err != nil {
		return cfg, fmt.Errorf("%s is not valid JSON (%v): the model snapshot is damaged; download it again", path, err)
	}
	if outer.ImageProcessor != nil {
		data = *outer.ImageProcessor
	}
	var j imageProcessorJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return cfg, fmt.Errorf("%s: the image processor settings do not parse (%v): the model snapshot is damaged; download it again", path, err)
	}
	setInt := func(dst *int, src *int) {
		if src != nil {
			*dst = *src
		}
	}
	setInt(&cfg.PatchSize, j.PatchSize)
	setInt(&cfg.TemporalPatchSize, j.TemporalPatchSize)
	setInt(&cfg.MergeSize, j.MergeSize)
	setInt(&cfg.MinPixels, j.MinPixels)
	setInt(&cfg.MaxPixels, j.MaxPixels)
	if j.Size != nil {
		setInt(&cfg.MinPixels, j.Size.ShortestEdge)
		setInt(&cfg.MaxPixels, j.Size.LongestEdge)
	}
	if j.DoRescale != nil {
		cfg.DoRescale = *j.DoRescale
	}
	if j.RescaleFactor != nil {
		cfg.RescaleFactor = *j.RescaleFactor
	}
	if j.DoNormalize != nil {
		cfg.DoNormalize = *j.DoNormalize
	}
	for name, pair := range map[string]struct {
		src []float64
		dst *[3]float64
	}{"image_mean": {j.ImageMean, &cfg.ImageMean}, "image_std": {j.ImageStd, &cfg.ImageStd}} {
		if pair.src == nil {
			continue
		}
		if len(pair.src) != 3 {
			return cfg, fmt.Errorf("%s: %s has %d values, want 3 (R, G, B)", path, name, len(pair.src))
		}
		copy(pair.dst[:], pair.src)
	}
	if cfg.PatchSize <= 0 || cfg.TemporalPatchSize <= 0 || cfg.MergeSize <= 0 {
		return cfg, fmt.Errorf("%s: patch_size %d, temporal_patch_size %d, merge_size %d must all be positive",
			path, cfg.PatchSize, cfg.TemporalPatchSize, cfg.MergeSize)
	}
	for c, s := range cfg.ImageStd {
		if cfg.DoNormalize && s == 0 {
			return cfg, fmt.Errorf("%s: image_std[%d] is 0", path, c)
		}
	}
	return cfg, nil
}

// normalizationTable maps each byte value to its normalised float per channel, the way the
// transformers fast image processor computes it: rescale and normalise fused into
// (v − mean/rescale)/(std/rescale), in float32.
func (p ImageProcessorConfig) normalizationTable() [3][256]float32 {
	var lut [3][256]float32
	for c := 0; c < 3; c++ {
		mean, std := float32(0), float32(1)
		switch {
		case p.DoRescale && p.DoNormalize:
			mean, std = float32(p.ImageMean[c]/p.RescaleFactor), float32(p.ImageStd[c]/p.RescaleFactor)
		case p.DoNormalize:
			mean, std = float32(p.ImageMean[c]), float32(p.ImageStd[c])
		}
		for v := 0; v < 256; v++ {
			x := float32(v)
			if p.DoRescale && !p.DoNormalize {
				x = float32(float64(v) * p.RescaleFactor)
			}
			lut[c][v] = (x - mean) / std
		}
	}
	return lut
}

// ConditionImage is one condition image prepared for both encoders.
type ConditionImage struct {
	Width, Height int       // Wc, Hc: the condition size, multiples of 32
	VAEInput      []float32 // [4, Hc, Wc]: RGBA in [−1, 1], the VAE encoder's input
	PixelValues   []float32 // [n, PatchRowLength]: the vision tower's rows
	GridTHW       [3]int    // image_grid_thw: (1, H/patch, W/patch) of the vision copy
	VisionWidth   int       // the vision copy's size (after smart_resize; normally Wc)
	VisionHeight  int       // … and Hc
}

// PrepareConditionImage runs spec §3.1–3.2 on one decoded image for an output resolution res
// (1024 by default; the condition size holds about res² pixels whatever the output size).
func PrepareConditionImage(img *image.NRGBA, res int, proc ImageProcessorConfig) (*ConditionImage, error) {
	if img == nil {
		return nil, fmt.Errorf("no condition image given")
	}
	wc, hc, err := ConditionSize(img.Rect.Dx(), img.Rect.Dy(), res)
	if err != nil {
		return nil, err
	}
	resized := ResizePillow(img, wc, hc, LanczosFilter)
	out := &ConditionImage{Width: wc, Height: hc, VAEInput: VAEInput(resized)}

	vision := CompositeOverWhite(resized)
	vh, vw, err := SmartResize(hc, wc, proc.PatchSize*proc.MergeSize, proc.MinPixels, proc.MaxPixels)
	if err != nil {
		return nil, err
	}
	if vw != wc || vh != hc {
		// Only when res² is outside the processor's pixel bounds (res < 256 or > 4096 with the stock
		// config). The processor's resample is bicubic; which implementation the reference uses
		// here is not pinned down by any golden case (its normalisation matches the transformers
		// fast processor, which resizes with torchvision): this is Pillow's BICUBIC on RGB.
		vision = resizePillow(vision, vw, vh, BicubicFilter, false)
	}
	out.VisionWidth, out.VisionHeight = vw, vh
	out.PixelValues, out.GridTHW, err = PixelValues(vision, proc)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// VAEInput is the VAE copy of a resized condition image (spec §3.1 step 4): channels RGBA, planar
// [4, H, W], each byte v mapped to 2·(v/255) − 1 in float32 as the reference computes it.
func VAEInput(img *image.NRGBA) []float32 {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	out := make([]float32, 4*w*h)
	var lut [256]float32
	for v := range lut {
		x := float32(v) / 255
		lut[v] = float32(2*x) - 1
	}
	for y := 0; y < h; y++ {
		off := img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y)
		for x := 0; x < w; x++ {
			for c := 0; c < 4; c++ {
				out[(c*h+y)*w+x] = lut[img.Pix[off+4*x+c]]
			}
		}
	}
	return out
}
