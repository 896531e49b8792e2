package textgen

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"time"

	"easel/engine/condimage"
	"easel/engine/quant"
	"easel/engine/qwen3vl"
	"easel/engine/tokenizer"
)

// Model is what a Writer reads from a model file: its weights, configs and vocab section
// (*cmf.File is one).
type Model interface {
	quant.Source
	ConfigJSON(name string) ([]byte, error)
	Vocab() []byte
}

// Generator is the decoder a Writer drives: engine/qwen3vl's Encoder on some backend, or a
// device runner that falls back to it.
type Generator interface {
	Generate(ctx context.Context, ids []int32, images []qwen3vl.VisionInput, opts qwen3vl.GenerateOptions) (*qwen3vl.Generation, error)
}

// Writer writes text with a model file's text encoder. It is not safe for concurrent use.
type Writer struct {
	gen   Generator
	tok   *tokenizer.Tokenizer
	proc  condimage.ImageProcessorConfig
	stops []int32
}

// ErrNoHead is returned (wrapped, with the one-sentence advice) by New for a model file
// converted before Easel kept the language head.
var ErrNoHead = qwen3vl.ErrNoLanguageHead

// New checks that m can write (its language head, without reading it) and reads its tokenizer
// and image processor settings; gen decodes.
func New(m Model, gen Generator) (*Writer, error) {
	info, err := qwen3vl.DescribeHead(m)
	if err != nil {
		return nil, err
	}
	if !info.Present {
		return nil, fmt.Errorf("%w: %s", ErrNoHead, qwen3vl.NoHeadAdvice(info))
	}
	vocab := m.Vocab()
	if len(vocab) == 0 {
		return nil, errors.New("the model file has no tokenizer (its vocab section is empty): convert the snapshot again with easel convert")
	}
	w := &Writer{gen: gen, proc: condimage.DefaultImageProcessorConfig()}
	if w.tok, err = tokenizer.Load(vocab); err != nil {
		return nil, fmt.Errorf("the model file's tokenizer: %w", err)
	}
	if js, err := m.ConfigJSON(condimage.ImageProcessorTensor); err == nil {
		if w.proc, err = condimage.ParseImageProcessorConfig(js, condimage.ImageProcessorTensor); err != nil {
			return nil, err
		}
	}
	for _, s := range []string{imEnd, "<|endoftext|>"} {
		if id, ok := w.tok.TokenID(s); ok {
			w.stops = append(w.stops, int32(id))
		}
	}
	return w, nil
}

// Options are the settings every use shares.
type Options struct {
	MaxTokens int              // 0: the use's default
	Sampling  qwen3vl.Sampling // qwen3vl.DefaultSampling for the model's own defaults
	Seed      uint64
	// OnText, when set, receives the text as it is written, in pieces that never split a
	// character.
	OnText func(piece string)
	// NoStop keeps writing through <|im_end|> to MaxTokens (reference comparisons).
	NoStop bool
}

// Result is one piece of writing.
type Result struct {
	Text            string
	Tokens          int // generated tokens, a final stop token included
	TokensPerSecond float64
	Stopped         bool // the model ended its answer (false: the token limit cut it)
	// Stages are the times of the image preparation (Describe, Check), the prefill and the
	// decoding, in that order.
	Stages []Stage
	IDs    []int32 // the generated token ids
}

// Stage is one timed part of a run.
type Stage struct {
	Name string
	Time time.Duration
}

// Expand turns a short idea into a detailed prompt.
func (w *Writer) Expand(ctx context.Context, idea string, o Options) (*Result, error) {
	idea = strings.TrimSpace(idea)
	if idea == "" {
		return nil, ErrEmptyIdea
	}
	return w.write(ctx, chatText(ExpandSystem, idea, 0), nil, o, 300, nil)
}

// ErrEmptyIdea is Expand's refusal of an empty idea.
var ErrEmptyIdea = errors.New("the idea is empty: write a few words (a subject, a scene) for Expand to work from")

// ErrBadImage marks an image the model cannot be shown (empty, an impossible aspect ratio).
var ErrBadImage = errors.New("the image cannot be shown to the model")

// Describe writes a prompt for img, answering question (DescribeQuestion when empty).
func (w *Writer) Describe(ctx context.Context, img *image.NRGBA, question string, o Options) (*Result, error) {
	if strings.TrimSpace(question) == "" {
		question = DescribeQuestion
	}
	start := time.Now()
	in, err := w.VisionInput(img)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadImage, err)
	}
	pads := in.Grid[0] * in.Grid[1] * in.Grid[2] / (w.proc.MergeSize * w.proc.MergeSize)
	stage := Stage{"image", time.Since(start)}
	return w.write(ctx, chatText("", question, pads), []qwen3vl.VisionInput{in}, o, 300, &stage)
}

// write runs one chat through the model.
func (w *Writer) write(ctx context.Context, chat string, images []qwen3vl.VisionInput, o Options, defaultMax int, first *Stage) (*Result, error) {
	ids := w.tok.Encode(chat)
	prompt := make([]int32, len(ids))
	for i, id := range ids {
		prompt[i] = int32(id)
	}
	max := o.MaxTokens
	if max <= 0 {
		max = defaultMax
	}
	stream := w.tok.NewStream()
	opts := qwen3vl.GenerateOptions{MaxTokens: max, Sampling: o.Sampling, Seed: o.Seed, OnToken: func(id int32) error {
		if p := stream.Push(int(id)); p != "" && o.OnText != nil {
			o.OnText(p)
		}
		return nil
	}}
	if !o.NoStop {
		opts.Stop = w.stops
	}
	g, err := w.gen.Generate(ctx, prompt, images, opts)
	if err != nil {
		return nil, err
	}
	if p := stream.Flush(); p != "" && o.OnText != nil {
		o.OnText(p)
	}
	r := &Result{Text: strings.TrimSpace(stream.Text()), Tokens: len(g.IDs), TokensPerSecond: g.TokensPerSecond(), Stopped: g.Stopped, IDs: g.IDs}
	if first != nil {
		r.Stages = append(r.Stages, *first)
	}
	r.Stages = append(r.Stages, Stage{"prefill", g.Prefill}, Stage{"decode", g.Decode})
	return r, nil
}

// describeMaxPixels bounds the image Describe and Check show the model: about a megapixel, the
// size the pipeline gives condition images (1024 merged tokens at most).
const describeMaxPixels = 1024 * 1024

// VisionInput prepares an image for the vision tower as the Qwen3-VL processor does (composited
// over white, smart_resize to multiples of patch × merge within the processor's pixel bounds and
// at most a megapixel, bicubic), ready for Generate.
func (w *Writer) VisionInput(img *image.NRGBA) (qwen3vl.VisionInput, error) {
	if img == nil || img.Rect.Dx() <= 0 || img.Rect.Dy() <= 0 {
		return qwen3vl.VisionInput{}, errors.New("the image is empty: choose an image file with pixels")
	}
	p := w.proc
	vision := condimage.CompositeOverWhite(img)
	h, wd, err := condimage.SmartResize(img.Rect.Dy(), img.Rect.Dx(), p.PatchSize*p.MergeSize, p.MinPixels, min(p.MaxPixels, describeMaxPixels))
	if err != nil {
		return qwen3vl.VisionInput{}, err
	}
	if wd != img.Rect.Dx() || h != img.Rect.Dy() {
		vision = condimage.ResizePillow(vision, wd, h, condimage.BicubicFilter)
	}
	rows, grid, err := condimage.PixelValues(vision, p)
	if err != nil {
		return qwen3vl.VisionInput{}, err
	}
	return qwen3vl.VisionInput{Pixels: rows, Grid: grid}, nil
}
