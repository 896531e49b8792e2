package memplan

import (
	"fmt"
	"strings"

	"easel/engine/cmf"
	"easel/engine/mmapfile"
	"easel/engine/pipeline"
	"easel/engine/qi21"
	"easel/engine/qwen3vl"
	"easel/engine/vae"
)

// Geometry is what the prediction needs to know about the model.
type Geometry struct {
	Layers, Hidden, MLPHidden int // the denoiser (published: 32 blocks, 4096 wide, SwiGLU 12288)
	// Weights are the bytes each network maps ("dit", "te", "vis", "vae", "other").
	Weights []pipeline.ComponentBytes
	// TextEmbedding is the bytes of the text encoder's token embedding (te.embed_tokens), of
	// which a prompt reads only its own rows.
	TextEmbedding int64
	// TextHead is the bytes of the text encoder's language head (te.lm_head.weight and
	// te.norm.weight), which only writing text touches (app/memplan/writing.go); 0 when the file
	// has none or ties the head to the embedding.
	TextHead int64
	// Estimated says the weights are the published model's expected sizes, not a file's.
	Estimated bool
	// Text, Vision and VAE are the other networks' geometry, which the Metal plan counts their
	// device buffers from; nil means the published model's (PublishedGeometry leaves them nil).
	Text   *qwen3vl.TextConfig
	Vision *qwen3vl.VisionConfig
	VAE    *vae.Config
}

// PublishedGeometry is Qwen-Image-2.1 as Easel's default .cmf holds it (spec §6.1, §11): the
// byte counts of the full-size synthetic model (every published tensor at its shape, in the
// cortiq profile's codecs): the DiT at q4tp (7.1 G parameters, 3.90 GB), the text encoder's
// language model at q8_2f with its q8_row embedding (7.58 GB, 0.62 GB of it the embedding),
// the vision tower at q8_2f (0.59 GB), the VAE at f16 (0.66 GB). Used until a model is chosen.
func PublishedGeometry() Geometry {
	return Geometry{
		Layers: 32, Hidden: 4096, MLPHidden: 12288,
		Weights: []pipeline.ComponentBytes{
			{Name: "dit", Bytes: 3_903_000_000},
			{Name: "te", Bytes: 7_576_000_000 + 622_658_304}, // the language model, then its head
			{Name: "vis", Bytes: 588_600_000},
			{Name: "vae", Bytes: 662_200_000},
		},
		TextEmbedding: 622_600_000,
		TextHead:      622_658_304, // lm_head at q8_2f [151936, 4096] and the final norm
		Estimated:     true,
	}
}

// textEmbeddingTensor is the text encoder's token embedding.
const textEmbeddingTensor = "te.embed_tokens.weight"

// WeightsOf sums a model file's tensors by network, as the pipeline's ledger does.
func WeightsOf(entries []cmf.Entry) []pipeline.ComponentBytes {
	order := []string{"dit", "te", "vis", "vae", "other"}
	sums := map[string]int64{}
	for _, e := range entries {
		name, _, _ := strings.Cut(e.Name, ".")
		switch name {
		case "dit", "te", "vis", "vae":
		default:
			name = "other"
		}
		sums[name] += int64(e.Size)
	}
	var out []pipeline.ComponentBytes
	for _, n := range order {
		if sums[n] > 0 {
			out = append(out, pipeline.ComponentBytes{Name: n, Bytes: sums[n]})
		}
	}
	return out
}

// HasVision reports whether the model can read condition images (it maps vision-tower weights).
// The published geometry has one.
func (g Geometry) HasVision() bool {
	for _, w := range g.Weights {
		if w.Name == "vis" && w.Bytes > 0 {
			return true
		}
	}
	return false
}

// GeometryOf reads a model file's configs and weight sizes.
func GeometryOf(path string) (Geometry, error) {
	f, err := cmf.Open(path)
	if err != nil {
		return Geometry{}, err
	}
	defer f.Close()
	return GeometryOfFile(f)
}

// GeometryOfFile reads an open model file's denoiser config, the text encoder's, vision tower's
// and VAE's configs when it has them, and its weight sizes. A file that changes or goes away
// under its mapping meanwhile gives its *mmapfile.FaultError, not a crash.
func GeometryOfFile(f *cmf.File) (g Geometry, err error) {
	defer mmapfile.Recover(&err)
	defer mmapfile.Guard()()
	path := f.Path()
	js, err := f.ConfigJSON(qi21.ConfigTensor)
	if err != nil {
		return Geometry{}, fmt.Errorf("%s: %w", path, err)
	}
	c, err := qi21.ParseConfig(js)
	if err != nil {
		return Geometry{}, fmt.Errorf("%s: %w", path, err)
	}
	g = Geometry{Layers: c.Layers, Hidden: c.Hidden(), MLPHidden: c.MLPHidden(), Weights: WeightsOf(f.Entries())}
	if e, ok := f.Entry(textEmbeddingTensor); ok {
		g.TextEmbedding = int64(e.Size)
	}
	g.TextHead = textHeadBytes(f)
	if js, err := f.ConfigJSON(textConfigTensor); err == nil {
		tc, err := qwen3vl.ParseTextConfig(js)
		if err != nil {
			return Geometry{}, fmt.Errorf("%s: %w", path, err)
		}
		g.Text = &tc
	}
	if js, err := f.ConfigJSON(visionConfigTensor); err == nil {
		vc, err := qwen3vl.ParseVisionConfig(js)
		if err != nil {
			return Geometry{}, fmt.Errorf("%s: %w", path, err)
		}
		g.Vision = &vc
	}
	if js, err := f.ConfigJSON(vae.ConfigTensor); err == nil {
		vcfg, err := vae.ParseConfig(js)
		if err != nil {
			return Geometry{}, fmt.Errorf("%s: %w", path, err)
		}
		g.VAE = vcfg
	}
	return g, nil
}

// The other networks' config blobs in a model file (absent ones leave the published geometry).
const (
	textConfigTensor   = "te.config_json"
	visionConfigTensor = "vis.config_json"
)
