package cli

import (
	"crypto/rand"
	"easel/app/checkpoint"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"easel/app/compose"
	"easel/app/imagefile"
	"easel/app/imagework"
	"easel/engine/pipeline"
)

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ", ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// generateArgs is the parsed command line.
type generateArgs struct {
	model, prompt, negative, size, aspect, seed, out string
	backend                                          string          // --backend; "" takes the settings'
	from                                             string          // --from: a PNG whose settings to reuse
	fromModelHash                                    string          // the model fingerprint it records
	set                                              map[string]bool // the flags given explicitly
	images                                           stringList
	loras                                            stringList // --lora FILE[:STRENGTH]
	resolution, steps                                int
	cfg                                              float64
	json, verbose, loraPreset                        bool
	start                                            startArgs
	fromSettings                                     *imagefile.Settings // the --from image's, when it started from an image
	batch                                            batchArgs
	grid                                             [3]string              // --grid-x, --grid-y, --grid-z (generate_grid.go)
	text                                             generateTextArgs       // --expand, --check
	remote                                           remoteArgs             // --render-on, --token (generate_remote.go)
	checkpoint                                       string                 // --checkpoint FILE
	noiseSeed                                        string                 // --noise-seed N ("": the rule's)
	args                                             []string               // the command line, as a checkpoint records it
	resume                                           *checkpoint.Checkpoint // --resume: the state to continue from
}

// startArgs are the flags of working on an image.
type startArgs struct {
	init, mask, extend string
	cropOffset         string
	strength, maskBlur float64
	maskGrow, maskCrop int
	keepOriginal       bool
}

// The defaults of the mask flags: half a latent cell of growth, and A1111's mask blur.
const (
	defaultMaskGrow = 8
	defaultMaskBlur = 4
)

func parseGenerateArgs(args []string) (*generateArgs, error) {
	g := &generateArgs{}
	f := flag.NewFlagSet("generate", flag.ContinueOnError)
	f.SetOutput(io.Discard)
	f.StringVar(&g.model, "model", "", "")
	f.StringVar(&g.prompt, "prompt", "", "")
	f.StringVar(&g.negative, "negative", "", "")
	f.Var(&g.images, "image", "")
	f.Var(&g.loras, "lora", "")
	f.BoolVar(&g.loraPreset, "lora-preset", false, "")
	f.StringVar(&g.size, "size", "", "")
	f.StringVar(&g.aspect, "aspect", "", "")
	f.IntVar(&g.resolution, "resolution", 0, "")
	f.IntVar(&g.steps, "steps", 0, "")
	f.Float64Var(&g.cfg, "cfg", 0, "")
	f.StringVar(&g.seed, "seed", "", "")
	f.StringVar(&g.out, "out", "", "")
	f.BoolVar(&g.json, "json", false, "")
	f.BoolVar(&g.verbose, "verbose", false, "")
	f.StringVar(&g.backend, "backend", "", "")
	f.StringVar(&g.from, "from", "", "")
	f.StringVar(&g.start.init, "init", "", "")
	f.Float64Var(&g.start.strength, "strength", 0, "")
	f.StringVar(&g.start.mask, "mask", "", "")
	f.Float64Var(&g.start.maskBlur, "mask-blur", defaultMaskBlur, "")
	f.IntVar(&g.start.maskGrow, "mask-grow", defaultMaskGrow, "")
	f.IntVar(&g.start.maskCrop, "mask-crop", 0, "")
	f.BoolVar(&g.start.keepOriginal, "keep-original", true, "")
	f.StringVar(&g.start.extend, "extend", "", "")
	f.StringVar(&g.start.cropOffset, "crop-offset", "", "")
	f.IntVar(&g.batch.count, "count", 1, "")
	f.StringVar(&g.batch.variationSeed, "variation-seed", "", "")
	f.Float64Var(&g.batch.variationStrength, "variation-strength", 0, "")
	f.Float64Var(&g.batch.hires, "hires", 0, "")
	f.Float64Var(&g.batch.hiresStrength, "hires-strength", 0.35, "")
	f.IntVar(&g.batch.hiresSteps, "hires-steps", 0, "")
	f.StringVar(&g.batch.hiresUpscaler, "hires-upscaler", "", "")
	f.StringVar(&g.grid[0], "grid-x", "", "")
	f.StringVar(&g.grid[1], "grid-y", "", "")
	f.StringVar(&g.grid[2], "grid-z", "", "")
	f.BoolVar(&g.text.expand, "expand", false, "")
	f.BoolVar(&g.text.check, "check", false, "")
	f.StringVar(&g.remote.addr, "render-on", "", "")
	f.StringVar(&g.remote.token, "token", "", "")
	f.StringVar(&g.checkpoint, "checkpoint", "", "")
	f.StringVar(&g.noiseSeed, "noise-seed", "", "")
	g.args = args
	if err := f.Parse(args); err != nil {
		return nil, err
	}
	g.set = map[string]bool{}
	f.Visit(func(fl *flag.Flag) { g.set[fl.Name] = true })
	if f.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (quote a prompt with spaces)", f.Arg(0))
	}
	if g.model == "" && g.remote.addr == "" {
		return nil, errors.New("--model is required (or --render-on HOST:PORT to render on another machine)")
	}
	if err := g.checkRemote(); err != nil {
		return nil, err
	}
	if g.start.init == "" && g.from == "" {
		for _, name := range []string{"strength", "mask", "mask-blur", "mask-grow", "mask-crop", "keep-original", "extend", "crop-offset"} {
			if g.set[name] {
				return nil, fmt.Errorf("--%s works on a start image: give it with --init", name)
			}
		}
	}
	if g.set["mask-crop"] && g.start.mask == "" && g.from == "" {
		return nil, errors.New("--mask-crop works on the masked area: give a mask with --mask")
	}
	return g, nil
}

// parseSize reads "WxH" (or "W×H", "W,H").
func parseSize(s string) (int, int, error) {
	for _, sep := range []string{"x", "X", "×", ","} {
		if a, b, ok := strings.Cut(s, sep); ok {
			w, err1 := strconv.Atoi(strings.TrimSpace(a))
			h, err2 := strconv.Atoi(strings.TrimSpace(b))
			if err1 == nil && err2 == nil && w > 0 && h > 0 {
				return w, h, nil
			}
			break
		}
	}
	return 0, 0, fmt.Errorf("--size %q: write it as WIDTHxHEIGHT in pixels, like 1024x768", s)
}

// draft is the command line as a compose.Draft, with the seed to run: the checks of the
// settings (each with its exit code), the size mode, and the condition images read and hashed.
func (g *generateArgs) draft() (*compose.Draft, uint64, *failure) {
	d := &compose.Draft{Prompt: g.prompt, Negative: g.negative, Steps: g.steps, CFG: g.cfg, Resolution: g.resolution,
		Size: compose.SizeAuto, Model: g.model}
	if g.steps < 0 {
		return nil, 0, fail(ExitSettings, "--steps %d: choose at least 1", g.steps)
	}
	if g.cfg < 0 {
		return nil, 0, fail(ExitSettings, "--cfg %g: choose 1 (off) or more", g.cfg)
	}
	if g.resolution < 0 {
		return nil, 0, fail(ExitSize, "--resolution %d: choose a positive number of pixels", g.resolution)
	}
	if g.size != "" && g.aspect != "" {
		return nil, 0, fail(ExitSize, "--size and --aspect both given: choose one")
	}
	if g.size != "" {
		w, h, err := parseSize(g.size)
		if err != nil {
			return nil, 0, &failure{ExitSize, err}
		}
		d.Size, d.CustomW, d.CustomH = compose.SizeExact, w, h
	}
	if g.aspect != "" {
		a, err := pipeline.ParseAspect(g.aspect)
		if err != nil {
			return nil, 0, &failure{ExitSize, err}
		}
		d.Ratio = a
	}
	var seed uint64
	if g.seed != "" {
		s, err := strconv.ParseUint(g.seed, 10, 64)
		if err != nil {
			return nil, 0, fail(ExitSettings, "--seed %q: give a whole number from 0 to %d", g.seed, uint64(1<<64-1))
		}
		seed = s
	} else {
		var b [4]byte
		rand.Read(b[:])
		seed = uint64(binary.LittleEndian.Uint32(b[:]))
	}
	d.Seed, d.RandomSeed = seed, g.seed == ""
	if g.noiseSeed != "" {
		n, err := strconv.ParseUint(g.noiseSeed, 10, 64)
		if err != nil {
			return nil, 0, fail(ExitSettings, "--noise-seed %q: give a whole number from 0 to %d", g.noiseSeed, uint64(1<<64-1))
		}
		d.NoiseSeed = &n
	}
	if f := g.batch.check(g.set); f != nil {
		return nil, 0, f
	}
	d.Count = g.batch.count
	if g.set["variation-seed"] && g.batch.variationStrength == 0 {
		if _, f := g.batch.variation(0); f != nil {
			return nil, 0, f
		}
	}
	if g.batch.variationStrength > 0 {
		var b [4]byte
		rand.Read(b[:])
		v, f := g.batch.variation(uint64(binary.LittleEndian.Uint32(b[:])))
		if f != nil {
			return nil, 0, f
		}
		d.VariationSeed, d.VariationStrength = v, g.batch.variationStrength
	} else if g.set["variation-seed"] && !g.set["variation-strength"] {
		return nil, 0, fail(ExitSettings, "--variation-seed without --variation-strength: give a strength (0.1–0.3 stays near the seed's image)")
	}
	if len(g.images) > pipeline.MaxImages {
		return nil, 0, fail(ExitImage, "%d condition images: the model takes at most %d", len(g.images), pipeline.MaxImages)
	}
	for _, path := range g.images {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, 0, fail(ExitImage, "condition image %s cannot be read: %v", path, err)
		}
		c, err := compose.NewCondition(path, data)
		if err != nil {
			return nil, 0, &failure{ExitImage, err}
		}
		c.Name = filepath.Base(path)
		d.Conditions = append(d.Conditions, c)
	}
	if f := g.startImage(d); f != nil {
		return nil, 0, f
	}
	return d, seed, nil
}

// startImage sets the draft's start image from --init (or the --from image's embedded one) and
// the mask flags; each bad input gets its exit code.
func (g *generateArgs) startImage(d *compose.Draft) *failure {
	a := g.start
	var st *compose.Start
	switch {
	case a.init != "":
		var err error
		if st, err = compose.LoadStart(a.init); err != nil {
			return fail(ExitImage, "start image %s: %v", a.init, err)
		}
	case g.fromSettings != nil && g.fromSettings.Init != nil:
		if st = compose.StartFromSettings(g.fromSettings); st == nil {
			return fail(ExitImage, "--from %s was made from a start image (%s) but holds no copy of it: pass it with --init", g.from, g.fromSettings.Init.Image.Name)
		}
	default:
		return nil
	}
	if g.set["strength"] {
		if !(a.strength > 0 && a.strength <= 1) {
			return fail(ExitSettings, "--strength %g: choose a value in (0, 1]: above 0 (keep almost everything) and at most 1 (repaint from noise)", a.strength)
		}
		st.Strength = a.strength
	}
	if a.mask != "" {
		if err := st.LoadMask(a.mask); err != nil {
			return fail(ExitImage, "mask %s: %v", a.mask, err)
		}
	}
	if a.init != "" || g.set["mask-grow"] {
		st.MaskGrow = a.maskGrow
	}
	if a.init != "" || g.set["mask-blur"] {
		st.MaskBlur = a.maskBlur
	}
	if st.MaskGrow < 0 || st.MaskBlur < 0 || a.maskCrop < 0 {
		return fail(ExitSettings, "--mask-grow %d, --mask-blur %g and --mask-crop %d: none may be negative", st.MaskGrow, st.MaskBlur, a.maskCrop)
	}
	if g.set["mask-crop"] {
		st.MaskCrop, st.CropPadding = true, a.maskCrop
	}
	if a.init != "" || g.set["keep-original"] {
		st.DiscardOriginal = !a.keepOriginal
	}
	if a.extend != "" {
		m, err := imagework.ParseMargins(a.extend)
		if err != nil {
			return fail(ExitSize, "--%v", err)
		}
		st.Extend = m
		if f := extendedCanvasSize(d, st, a.extend); f != nil {
			return f
		}
	}
	if a.cropOffset != "" {
		off, err := imagework.ParseOffset(a.cropOffset)
		if err != nil {
			return fail(ExitSize, "--crop-offset: %v", err)
		}
		st.CropOffset = off
	}
	d.Start = st
	if d.Size == compose.SizeAuto && d.Ratio == 0 {
		d.Size = compose.SizeFromImage // the size follows the start image
	}
	return nil
}
