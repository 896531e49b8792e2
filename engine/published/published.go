// Package published holds the published Qwen-Image-2.1 snapshot's small config files, embedded once
// (docs/reference/qi21-spec.md §5.1, §6.1, §8.1, §10.1, §3.2): the files of the official snapshot
// as far as the specification knows them. The transformer, VAE and scheduler files are the class
// defaults the reference fixtures show; the text encoder is Qwen3-VL-8B's; the image processor has
// the stock Qwen3-VL pixel bounds.
//
// The networks (engine/qi21, engine/qwen3vl, engine/vae) parse their geometry from here for plans
// made before a model file is chosen, and engine/convert writes them into its synthetic model. It
// is a leaf: it imports nothing of Easel's, so no network needs the converter for its geometry.
package published

import (
	"embed"
	"io/fs"
)

//go:embed snapshot
var snapshot embed.FS

// Snapshot paths of the files this package holds.
const (
	ModelIndexPath  = "model_index.json"
	TransformerPath = "transformer/config.json"
	TextEncoderPath = "text_encoder/config.json"
	VAEPath         = "vae/config.json"
	SchedulerPath   = "scheduler/scheduler_config.json"
	ProcessorPath   = "processor/processor_config.json"
)

// Files are the published snapshot's small files, by path in the snapshot; a new map each call.
func Files() map[string][]byte {
	out := map[string][]byte{}
	for _, p := range []string{ModelIndexPath, TransformerPath, TextEncoderPath, VAEPath, SchedulerPath, ProcessorPath} {
		out[p] = File(p)
	}
	return out
}

// File is one published file by its snapshot path (a copy), or nil for a path it does not hold.
func File(path string) []byte {
	b, err := fs.ReadFile(snapshot, "snapshot/"+path)
	if err != nil {
		return nil
	}
	return b
}
