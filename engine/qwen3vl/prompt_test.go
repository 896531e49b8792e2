package qwen3vl

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"easel/engine/condimage"
	"easel/engine/tokenizer"
	"easel/internal/golden"
)

var (
	snapshotTokenizerOnce sync.Once
	snapshotTok           *tokenizer.Tokenizer
	snapshotProc          condimage.ImageProcessorConfig
	snapshotErr           error
)

// snapshotTokenizer loads the real Qwen tokenizer and image-processor config of the golden
// snapshot, once per test run.
func snapshotTokenizer(t *testing.T) (*tokenizer.Tokenizer, condimage.ImageProcessorConfig) {
	t.Helper()
	snapshotTokenizerOnce.Do(func() {
		snap, err := golden.ModelSnapshot()
		if err != nil {
			snapshotErr = err
			return
		}
		snapshotTok, snapshotErr = tokenizer.LoadFile(filepath.Join(snap, "processor", "tokenizer.json"))
		if snapshotErr == nil {
			snapshotProc, snapshotErr = condimage.LoadImageProcessorConfig(filepath.Join(snap, "processor", "processor_config.json"))
		}
	})
	if snapshotErr != nil {
		t.Fatal(snapshotErr)
	}
	return snapshotTok, snapshotProc
}

// TestGoldenPromptIDs: for every pipeline case, the positive (te0) and, with CFG, negative (te1)
// prompts build to exactly the processor's input_ids, with the image-pad counts of the case's
// image_grid_thw; the system prefix is 14 rows; the kept rows match the prompt embeddings'
// length, and their image mask is the text part of the first transformer call's img_mask.
func TestGoldenPromptIDs(t *testing.T) {
	tok, proc := snapshotTokenizer(t)
	paths, err := golden.Cases("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no pipeline_* cases")
	}
	for _, path := range paths {
		c := loadCase(t, path)
		for _, side := range []struct{ prefix, metaKey string }{{"te0_", "prompt"}, {"te1_", "neg"}} {
			if !c.Has(side.prefix + "input_ids") {
				continue
			}
			t.Run(c.Name+"/"+side.prefix, func(t *testing.T) {
				prompt, _ := c.Meta[side.metaKey].(string) // null (no negative prompt) reads as ""
				var pads []int
				if c.Has(side.prefix + "image_grid_thw") {
					grids := int32s(t, c, side.prefix+"image_grid_thw")
					for i := 0; i+3 <= len(grids); i += 3 {
						n, err := ImagePadCount([3]int{int(grids[i]), int(grids[i+1]), int(grids[i+2])}, proc.MergeSize)
						if err != nil {
							t.Fatal(err)
						}
						pads = append(pads, n)
					}
				}
				p, err := BuildPrompt(tok, prompt, pads)
				if err != nil {
					t.Fatal(err)
				}
				if want := int32s(t, c, side.prefix+"input_ids"); !slices.Equal(p.IDs, want) {
					t.Errorf("ids of %q with image pads %v\n got %v\nwant %v", prompt, pads, p.IDs, want)
				}
				if p.Drop != 14 {
					t.Errorf("system prefix %d rows, the pipeline drops 14", p.Drop)
				}
				if side.prefix != "te0_" {
					return
				}
				rows := c.Shape("dit0_encoder_hidden_states")
				if len(rows) != 3 || rows[1] != len(p.ImageMask) {
					t.Fatalf("%d rows kept after the prefix, prompt embeddings have shape %v", len(p.ImageMask), rows)
				}
				mask, err := c.Tensor("dit0_img_mask")
				if err != nil {
					t.Fatal(err)
				}
				for i, isImage := range p.ImageMask {
					if want := mask.Data[i] == 1; isImage != want {
						t.Errorf("image mask row %d = %v, reference %v", i, isImage, want)
					}
				}
			})
		}
		c.Close()
	}
}

func TestPromptText(t *testing.T) {
	const sys = "<|im_start|>system\nComprehend and analyze the provided prompt.<|im_end|>\n<|im_start|>user\n"
	const end = "<|im_end|>\n<|im_start|>assistant\n"
	const seg = "<|vision_start|><|image_pad|><|vision_end|>"
	tests := []struct {
		name, prompt string
		images       int
		want         string
	}{
		{"text to image", "a cat", 0, sys + "a cat" + end},
		{"empty prompt becomes a space", "", 0, sys + " " + end},
		{"one image", "snow", 1, sys + "<image1>" + seg + "snow" + end},
		{"leading space from the second image on", "mix", 3, sys + "<image1>" + seg + " <image2>" + seg + " <image3>" + seg + "mix" + end},
		{"negative count is text to image", "x", -1, sys + "x" + end},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PromptText(tc.prompt, tc.images); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestBuildPromptRejects(t *testing.T) {
	tok, _ := snapshotTokenizer(t)
	tests := []struct {
		name, prompt string
		pads         []int
		wantErr      string
	}{
		{"zero image tokens", "x", []int{0}, "at least 1"},
		{"image pad typed in the prompt", "a <|image_pad|> b", nil, "contains <|image_pad|>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuildPrompt(tok, tc.prompt, tc.pads)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one mentioning %q", err, tc.wantErr)
			}
		})
	}
	if _, err := ImagePadCount([3]int{1, 3, 5}, 2); err == nil {
		t.Error("ImagePadCount of an odd grid: no error")
	}
}
