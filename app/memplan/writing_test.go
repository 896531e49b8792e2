package memplan

import (
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/internal/generatecase"
	"easel/internal/tinymodel"
	"easel/internal/tinysnapshot"
)

// Writing counts the language model without the embedding but with its head, the key/value cache
// for the prompt and every token written, and the larger of the prefill's and one token's
// activations; an image adds the vision tower; a tied head reads the whole embedding. The image
// pipeline's text-encoder stage leaves the head out.
func TestWritingCountsHeadCacheAndActivations(t *testing.T) {
	g := PublishedGeometry()
	p := PredictWriting(g, WritingPlan{PromptTokens: 60, MaxTokens: 300}, 64e9)
	if want := int64(2 * 4 * 36 * 8 * 128 * 360); p.KVCache != want {
		t.Errorf("key/value cache %d bytes, want %d (36 layers × 8 kv heads × 128 × 360 tokens, keys and values, float32)", p.KVCache, want)
	}
	if want := int64(7_576_000_000 + 622_658_304 - 622_600_000); p.Weights != want || p.Head != 622_658_304 {
		t.Errorf("weights %d (head %d), want %d (head 622658304)", p.Weights, p.Head, want)
	}
	if p.Decode < 151936*4 || p.Prefill <= 0 || p.Peak != Process+p.Weights+p.KVCache+2*max(p.Prefill, p.Decode) || !p.Fits {
		t.Errorf("prediction %+v", p)
	}
	img := [3]int{1, 64, 64}
	withImage := PredictWriting(g, WritingPlan{PromptTokens: 60 + 1024, MaxTokens: 300, Image: &img}, 64e9)
	if withImage.Weights != p.Weights+588_600_000 || withImage.KVCache <= p.KVCache {
		t.Errorf("an image adds the vision tower and its tokens: %+v", withImage)
	}
	tied := g
	tied.TextHead = 0
	if tp := PredictWriting(tied, WritingPlan{PromptTokens: 60, MaxTokens: 300}, 0); tp.Head != g.TextEmbedding || tp.Weights != p.Weights+g.TextEmbedding {
		t.Errorf("a tied head: %+v", tp)
	}
	if small := PredictWriting(g, WritingPlan{PromptTokens: 60, MaxTokens: 300}, 4e9); small.Fits {
		t.Errorf("8 GB of weights fit a 4 GB budget: %+v", small)
	}
	// The image pipeline's text encoder never touches the head.
	if s := Predict(g, Plan{Width: 1024, Height: 1024}, 64e9).Stages[0]; s.Weights != 7_576_000_000-622_600_000 {
		t.Errorf("text-encoder stage weights %d, want the language model without embedding and head", s.Weights)
	}
}

// A file's geometry says how large its head is: an untied file's lm_head and norm, 0 for a tied
// one.
func TestGeometryOfFileCountsTheHead(t *testing.T) {
	untied, err := cmf.Open(generatecase.Model(t, tinysnapshot.Permutation{A: 7907, B: 5}, convert.ProfileCortiq))
	if err != nil {
		t.Fatal(err)
	}
	defer untied.Close()
	g, err := GeometryOfFile(untied)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := untied.Entry("te.lm_head.weight")
	n, _ := untied.Entry("te.norm.weight")
	if g.TextHead != int64(h.Size+n.Size) || g.TextHead == 0 {
		t.Errorf("untied head %d bytes, want %d", g.TextHead, h.Size+n.Size)
	}
	g, err = GeometryOfFile(tinymodel.Open(t, convert.Options{Profile: convert.ProfileCortiq}))
	if err != nil || g.TextHead != 0 {
		t.Errorf("tied head %d bytes (%v), want 0", g.TextHead, err)
	}
}
