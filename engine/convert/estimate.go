package convert

import (
	"fmt"
	"os"

	"easel/engine/cmf"
)

// Estimate is what a conversion will need, worked out from the snapshot's configs and safetensors
// headers without reading any weights: the first-run window shows it before starting.
type Estimate struct {
	Tensors     int   // tensors the file will hold, config blobs included
	SourceBytes int64 // weight bytes that will be read from the snapshot
	OutputBytes int64 // an upper bound of the .cmf's size: the free space Convert insists on
}

// EstimateConversion plans the conversion of the snapshot at dir as Convert would, and returns
// its size. It fails with the same messages Convert would give for an incomplete snapshot.
func EstimateConversion(dir string, opts Options) (*Estimate, error) {
	profile := opts.Profile
	if profile == "" {
		profile = ProfileCortiq
	}
	if _, err := ParseProfile(string(profile)); err != nil {
		return nil, err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder: choose the folder of a Qwen-Image-2.1 snapshot", dir)
	}
	vision := !opts.NoVision
	configs, err := readConfigs(dir)
	if err != nil {
		return nil, err
	}
	var components [3][]*shard
	defer func() {
		for _, c := range components {
			for _, s := range c {
				s.close()
			}
		}
	}()
	for i, c := range []component{transformerComponent, textEncoderComponent, vaeComponent} {
		if components[i], err = openComponent(dir, c); err != nil {
			return nil, err
		}
	}
	items, _, err := plan(components[0], components[1], components[2], profile.codecs(), vision)
	if err != nil {
		return nil, err
	}
	blobs, err := configs.blobs(vision)
	if err != nil {
		return nil, err
	}
	e := &Estimate{Tensors: len(blobs) + len(items)}
	for _, it := range items {
		e.SourceBytes += int64(len(it.src.Data))
	}
	e.OutputBytes = estimateSize(cmf.Options{ExpectedTensors: e.Tensors}, blobs, items, configs.tokenizer)
	return e, nil
}
