package serve

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"easel/app/compose"
	"easel/app/imagework"
	"easel/app/serve/render"
	"easel/engine/pipeline"
	"easel/engine/sched"
)

// The most images one request makes (batch_size × n_iter).
const maxImagesPerRequest = 64

// params are the generation fields of a txt2img or img2img request, with A1111's defaults except
// where the model's apply (absent size, steps, CFG).
type params struct {
	Prompt, Negative   string
	Seed, Subseed      int64
	SubseedStrength    float64
	Width, Height      int // 0: the model's
	Steps              int // 0: the model's
	CFG                float64
	BatchSize, NIter   int
	Sampler, Scheduler string
	// EaselSigmas and EaselScheduler are a LoRA preset's fixed sigma grid and scheduler
	// configuration (easel_sigmas, easel_scheduler: Easel's own fields, which the window's
	// "Render on" sends so a preset's schedule is the one used; nil when absent).
	EaselSigmas    []float64
	EaselScheduler *sched.Config
	SendImages     bool
	SaveImages     bool // save_images: into the server's output folder and history (Config.Save)
	Interrupted    bool // an image was stopped early by /interrupt (info's "interrupted")
	Conditions     []compose.Condition
	LoRAs          []compose.LoRA
	Warnings       []string

	// Hires is txt2img's second pass (enable_hr; hires.go), nil without it.
	Hires *hiresParams

	// img2img
	Init                  []compose.Condition
	Denoising             float64
	Mask                  *compose.Condition
	MaskBlur              int
	SizeGiven             bool
	MaskInvert            int
	InpaintFullRes        bool
	NoPasteBack           bool // easel_paste_back false: the client pastes the result back itself
	InpaintFullResPadding int

	// Alpha keeps the model's alpha channel in the answer's PNGs (easel_alpha: Easel's own
	// field); A1111 answers RGB, the colour channels as rendered.
	Alpha bool
	// Model is the model file the request renders with: override_settings.sd_model_checkpoint,
	// or "" for the server's current model.
	Model string
	// Start, when set, is the start image as the caller built it (the other APIs), used instead
	// of the one img2img's fields describe; SizeAuto leaves the size to the model (or the start
	// image) as `easel generate` without --size does.
	Start    *compose.Start
	SizeAuto bool
}

// maxPromptChars caps a prompt and a negative prompt (render.MaxPromptChars).
const maxPromptChars = render.MaxPromptChars

// a1111Side is A1111's width and height when a request gives none.
const a1111Side = 512

// readParams reads the fields txt2img and img2img share.
func (s *Server) readParams(f *fields) *params {
	p := &params{}
	p.Prompt = f.Str("prompt", "")
	p.Negative = f.Str("negative_prompt", "")
	for i, v := range []string{p.Prompt, p.Negative} {
		if n := len([]rune(v)); n > maxPromptChars {
			name := []string{"prompt", "negative_prompt"}[i]
			f.Invalid(name, fmt.Sprintf("%s is %d characters: this server takes at most %d; shorten it", name, n, maxPromptChars))
		}
	}
	p.Alpha = f.Bool("easel_alpha", false)
	p.Seed = f.Int("seed", -1)
	f.Range("seed", p.Seed, -1, math.MaxInt64)
	p.Subseed = f.Int("subseed", -1)
	f.Range("subseed", p.Subseed, -1, math.MaxInt64)
	p.SubseedStrength = f.Float("subseed_strength", 0)
	f.RangeF("subseed_strength", p.SubseedStrength, 0, 1)
	w, h := f.Int("width", 0), f.Int("height", 0)
	f.Range("width", w, compose.SizeMultiple, compose.MaxSide)
	f.Range("height", h, compose.SizeMultiple, compose.MaxSide)
	p.Width, p.Height = int(w), int(h)
	p.SizeGiven = f.Has("width") || f.Has("height")
	steps := f.Int("steps", 0)
	f.Range("steps", steps, 1, 1000)
	p.Steps = int(steps)
	p.CFG = f.Float("cfg_scale", 0)
	f.RangeF("cfg_scale", p.CFG, 0, 100)
	bs, ni := f.Int("batch_size", 1), f.Int("n_iter", 1)
	f.Range("batch_size", bs, 1, maxImagesPerRequest)
	f.Range("n_iter", ni, 1, maxImagesPerRequest)
	p.BatchSize, p.NIter = int(max(bs, 1)), int(max(ni, 1))
	if p.BatchSize*p.NIter > maxImagesPerRequest {
		f.Invalid("n_iter", fmt.Sprintf("batch_size × n_iter is %d images: this server makes at most %d per request", p.BatchSize*p.NIter, maxImagesPerRequest))
	}
	p.EaselSigmas, p.EaselScheduler = readSchedule(f, p.Steps)
	p.Sampler = f.Str("sampler_name", f.Str("sampler_index", ""))
	p.Scheduler = f.Str("scheduler", "")
	p.SendImages = f.Bool("send_images", true)
	p.SaveImages = f.Bool("save_images", false)

	if cs := f.StrList("extra_images"); len(cs) > 0 {
		if len(cs) > compose.MaxConditions {
			f.Invalid("extra_images", fmt.Sprintf("%d condition images: the model takes at most %d", len(cs), compose.MaxConditions))
		} else {
			p.Conditions = conditionImages(f, "extra_images", cs)
		}
	}
	var warns []string
	p.Prompt, p.LoRAs, warns = takeLoRAs(f, "prompt", p.Prompt, s.cfg.LoRADir)
	p.Warnings = append(p.Warnings, warns...)

	// What Easel cannot do is said, not silently changed.
	switch strings.ToLower(strings.TrimSpace(p.Sampler)) {
	case "", "euler", "k_euler":
	default:
		p.Warnings = append(p.Warnings, fmt.Sprintf("sampler %q is not available: Easel samples with Euler (flow matching), which was used", p.Sampler))
	}
	switch strings.ToLower(strings.TrimSpace(p.Scheduler)) {
	case "", "automatic", "simple":
	default:
		p.Warnings = append(p.Warnings, fmt.Sprintf("scheduler %q is not available: the model's own flow-matching schedule was used", p.Scheduler))
	}
	for _, name := range []string{"restore_faces", "tiling"} {
		if f.Bool(name, false) {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s is not available in Easel; it was ignored", name))
		}
	}
	if f.List("styles") > 0 {
		p.Warnings = append(p.Warnings, "styles are not available in Easel; they were ignored")
	}
	if len(f.Object("alwayson_scripts")) > 0 || f.Str("script_name", "") != "" {
		p.Warnings = append(p.Warnings, "scripts are not available in Easel; they were ignored")
	}
	if fw, fh := f.Int("seed_resize_from_w", -1), f.Int("seed_resize_from_h", -1); fw > 0 || fh > 0 {
		p.Warnings = append(p.Warnings, "seed_resize_from_w/h are not available in Easel; they were ignored")
	}
	s.readOverrides(f, p)
	if w := emphasisWarning(p.Prompt, p.Negative); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	return p
}

// randomSeed is A1111's random seed: a 32-bit number.
func randomSeed() int64 {
	var b [4]byte
	rand.Read(b[:])
	return int64(binary.LittleEndian.Uint32(b[:]))
}

// plan is one image of a request: the draft the window would make for it and its seeds.
type plan struct {
	Draft   compose.Draft
	Seed    uint64
	Subseed uint64
	Request pipeline.Request
	// Prep is the init image prepared for the run (img2img), whose Finish makes the picture to
	// answer with; nil for txt2img.
	Prep *imagework.Prepared
	// Exact is how the requested size is made when the model cannot make it directly.
	Exact exactSize
	// ModelHash is the model file's SHA-256 for the image's settings ("" while unknown).
	ModelHash string
	// stop ends the job's denoising early (/interrupt): pipeline.Request.Stop.
	stop chan struct{}
	// Hires, for a second pass's plan, is what its picture records of both passes (hires.go).
	Hires *hiresRecord
}
