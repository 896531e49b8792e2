package textgen

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/imageio"
	"easel/engine/ml/cpu"
	"easel/engine/qwen3vl"
	"easel/internal/generatecase"
	"easel/internal/golden"
	"easel/internal/tinymodel"
)

func TestMain(m *testing.M) {
	code := m.Run()
	tinymodel.RemoveAll()
	os.Exit(code)
}

func cpuWriter(t *testing.T, f *cmf.File) *Writer {
	t.Helper()
	enc, err := qwen3vl.NewEncoder(cpu.New(), f)
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(f, enc)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// between is the text of s after from and before the next to.
func between(t *testing.T, s, from, to string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		t.Fatalf("template_text has no %q", from)
	}
	v, _, ok := strings.Cut(rest, to)
	if !ok {
		t.Fatalf("template_text has no %q after %q", to, from)
	}
	return v
}

// Each reference case, rebuilt by the Writer from its parts: the chat template gives the case's
// input_ids; an image case's PNG, prepared by VisionInput, gives its pixel_values and grid; and
// the Writer's greedy run writes the case's 40 tokens.
func TestWriterMatchesTheReferenceCases(t *testing.T) {
	generatecase.Each(t, convert.ProfileF16, func(t *testing.T, c *golden.Case, model *cmf.File) generatecase.Run {
		w := cpuWriter(t, model)
		text, _ := c.Meta["template_text"].(string)
		in := generatecase.ReadInputs(t, c)
		var images []qwen3vl.VisionInput
		pads := 0
		if png, ok := c.Meta["image_png"].(string); ok {
			path, err := golden.Path(png)
			if err != nil {
				t.Fatal(err)
			}
			img, err := imageio.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			vi, err := w.VisionInput(img)
			if err != nil {
				t.Fatal(err)
			}
			if len(in.Grids) != 1 || vi.Grid != in.Grids[0] || golden.MaxAbsErr(vi.Pixels, in.Pixels) > 1e-6 {
				t.Errorf("VisionInput(%s): grid %v (want %v), max error %.3g", png, vi.Grid, in.Grids, golden.MaxAbsErr(vi.Pixels, in.Pixels))
			}
			images = []qwen3vl.VisionInput{vi}
			pads = vi.Grid[0] * vi.Grid[1] * vi.Grid[2] / 4
		}
		system := ""
		if strings.HasPrefix(text, imStart+"system\n") {
			system = between(t, text, imStart+"system\n", imEnd)
		}
		user := between(t, text, imStart+"user\n", imEnd)
		if pads > 0 {
			_, user, _ = strings.Cut(user, visionEnd)
		}
		chat := chatText(system, user, pads)
		if pads <= 1 && chat != text {
			t.Errorf("chat template:\n got %q\nwant %q", chat, text)
		}
		ids := w.tok.Encode(chat)
		got := make([]int32, len(ids))
		for i, id := range ids {
			got[i] = int32(id)
		}
		if !slices.Equal(got, in.IDs) {
			t.Errorf("the chat tokenizes to %v, want input_ids %v", got, in.IDs)
		}
		return func(t *testing.T, _ generatecase.Inputs, maxTokens int, penalty float64, onLogits func(int, []float32)) []int32 {
			// The Writer's own path: its template, its image and its stream.
			w.gen = logitsTap{w.gen, onLogits}
			r, err := w.write(context.Background(), chat, images, Options{MaxTokens: maxTokens, Sampling: qwen3vl.Sampling{RepetitionPenalty: penalty}, NoStop: true}, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			w.gen = w.gen.(logitsTap).Generator
			return r.IDs
		}
	})
}

// logitsTap passes each step's logits to the reference check.
type logitsTap struct {
	Generator
	on func(int, []float32)
}

func (l logitsTap) Generate(ctx context.Context, ids []int32, images []qwen3vl.VisionInput, opts qwen3vl.GenerateOptions) (*qwen3vl.Generation, error) {
	opts.OnLogits = l.on
	return l.Generator.Generate(ctx, ids, images, opts)
}

// An empty idea is refused before any work; a file without the head says what it lacks.
func TestWriterRefusals(t *testing.T) {
	f := tinymodel.Open(t, convert.Options{Profile: convert.ProfileCortiq})
	w := cpuWriter(t, f)
	if _, err := w.Expand(context.Background(), "  \n", Options{}); !errors.Is(err, ErrEmptyIdea) {
		t.Errorf("empty idea: %v", err)
	}
	old, err := cmf.Open(tinymodel.WithoutHead(t, convert.Options{Profile: convert.ProfileCortiq}))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	enc, err := qwen3vl.NewEncoder(cpu.New(), old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(old, enc); !errors.Is(err, ErrNoHead) || !strings.Contains(err.Error(), "easel convert") {
		t.Errorf("a file without the head: %v", err)
	}
}

// The tiny model writes: text streams in pieces that join to the result, tokens and stages are
// counted, and Check answers every element it asks about (random weights answer nonsense, so
// only the shape of the answer is checked).
func TestWriterStreamsAndCounts(t *testing.T) {
	f := tinymodel.Open(t, convert.Options{Profile: convert.ProfileCortiq})
	w := cpuWriter(t, f)
	var pieces []string
	r, err := w.Expand(context.Background(), "a lighthouse at dusk", Options{MaxTokens: 12, Sampling: qwen3vl.DefaultSampling, Seed: 3, OnText: func(p string) { pieces = append(pieces, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Tokens == 0 || r.Tokens > 12 || strings.TrimSpace(strings.Join(pieces, "")) != r.Text || len(r.Stages) != 2 {
		t.Errorf("expand: %d tokens, text %q from pieces %q, stages %v", r.Tokens, r.Text, pieces, r.Stages)
	}
	again, err := w.Expand(context.Background(), "a lighthouse at dusk", Options{MaxTokens: 12, Sampling: qwen3vl.DefaultSampling, Seed: 3})
	if err != nil || !slices.Equal(again.IDs, r.IDs) {
		t.Errorf("the same seed wrote %v then %v (%v)", r.IDs, again.IDs, err)
	}
	img := generatecase.Picture(96, 64)
	v, cr, err := w.Check(context.Background(), img, `two red apples, a sign reading "OPEN"`, Options{MaxTokens: 6})
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 3 || v[0].Element != `the text "OPEN"` || cr.Tokens == 0 || cr.Stages[0].Name != "prefill" {
		t.Errorf("check: %+v, %+v", v, cr)
	}
}

func TestElementsAndAnswers(t *testing.T) {
	got := Elements(`A red fox and two owls, sitting on a log with moss; the sign says "Welcome home". A red fox`)
	want := []string{`the text "Welcome home"`, "A red fox", "two owls", "sitting on a log", "moss", "the sign says"}
	if !slices.Equal(got, want) {
		t.Errorf("elements %q, want %q", got, want)
	}
	v := parseAnswers("1. yes\n2: No\n3) maybe\n4 - YES\n1. no", []string{"a", "b", "c", "d"})
	marks := ""
	for _, x := range v {
		marks += x.Mark()
	}
	if marks != "✓✗?✓" {
		t.Errorf("answers read as %s, want ✓✗?✓", marks)
	}
}
