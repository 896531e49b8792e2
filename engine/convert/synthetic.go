package convert

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"easel/engine/cmf"
	"easel/engine/published"
	"easel/engine/quant"
	"easel/engine/safetensors"
)

// A full-size synthetic model: every tensor of a Qwen-Image-2.1 snapshot at its real shape and in
// the profile's codec, written straight into the container (no snapshot on disk), with random
// but well-scaled weights. It exercises what only the real size shows (offsets, buffer sizes,
// memory) without the 31 GB download. The pipeline runs it; the picture is noise.

// SyntheticOptions tune WriteSynthetic.
type SyntheticOptions struct {
	// Configs are the snapshot's small files by path ("transformer/config.json", …); nil means
	// published.Files().
	Configs map[string][]byte
	// Tokenizer is processor/tokenizer.json (required: the pipeline tokenizes prompts).
	Tokenizer []byte
	Profile   Profile
	Seed      uint64
	Progress  func(Progress)
}

// syntheticProvenance marks a synthetic file in its header.
const syntheticProvenance = "synthetic (random weights, published shapes)"

// IsSynthetic reports whether a file's header says WriteSynthetic made it.
func IsSynthetic(h *cmf.Header) bool {
	return strings.Contains(string(h.Provenance), syntheticProvenance)
}

// WriteSynthetic writes the model the configs describe, with random weights, to out. Like Convert
// it streams (a few blocks of rows in memory), checks the free space first and renames the file
// into place only when it is complete.
func WriteSynthetic(ctx context.Context, out string, opts SyntheticOptions) (*Result, error) {
	start := time.Now()
	if len(opts.Tokenizer) == 0 {
		return nil, errors.New("the synthetic model needs the Qwen tokenizer (processor/tokenizer.json): give its bytes")
	}
	if opts.Profile == "" {
		opts.Profile = ProfileCortiq
	}
	if _, err := ParseProfile(string(opts.Profile)); err != nil {
		return nil, err
	}
	files, configs, err := opts.configs()
	if err != nil {
		return nil, err
	}
	comps, err := syntheticComponents(configs, files)
	if err != nil {
		return nil, err
	}
	vision := configs.visionConfig != nil
	j := &job{profile: opts.Profile, vision: vision, configs: configs, components: comps}
	if j.items, j.skipped, err = plan(comps[0], comps[1], comps[2], opts.Profile.codecs(), vision); err != nil {
		return nil, err
	}
	if j.blobs, err = configs.blobs(vision); err != nil {
		return nil, err
	}
	header, err := buildHeader(syntheticProvenance, opts.Profile, configs, vision)
	if err != nil {
		return nil, err
	}
	if err := checkFreeSpace(out, j.outputBound()); err != nil {
		return nil, err
	}
	w, err := cmf.Create(out, j.writerOptions())
	if err != nil {
		return nil, err
	}
	res, err := writeSynthetic(ctx, w, header, j, opts, start)
	if err != nil {
		w.Abort()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	st, err := os.Stat(out)
	if err != nil {
		return nil, err
	}
	res.Path, res.FileBytes, res.Skipped, res.Elapsed = out, st.Size(), j.skipped, time.Since(start)
	return res, nil
}

// configs are the snapshot files the options name (the published ones by default), parsed.
func (opts SyntheticOptions) configs() (map[string][]byte, *snapshotConfigs, error) {
	files := opts.Configs
	if files == nil {
		files = published.Files()
	}
	c, err := configFiles{
		index: files["model_index.json"], dit: files["transformer/config.json"], textEncoder: files["text_encoder/config.json"],
		vae: files["vae/config.json"], scheduler: files["scheduler/scheduler_config.json"], tokenizer: opts.Tokenizer,
		processor: files["processor/processor_config.json"],
	}.parse()
	return files, c, err
}

// syntheticComponents are the three components as shards that list tensors without data, in
// the source precisions of the published snapshot (bf16; the VAE f32).
func syntheticComponents(c *snapshotConfigs, files map[string][]byte) ([3][]*shard, error) {
	var out [3][]*shard
	lists := []struct {
		rel   string
		list  func([]byte) ([]sourceTensor, error)
		raw   []byte
		dtype string
	}{
		{"transformer", ditTensors, c.dit, "BF16"},
		{"text_encoder", textEncoderTensors, files["text_encoder/config.json"], "BF16"},
		{"vae", vaeTensors, c.vae, "F32"},
	}
	for i, l := range lists {
		ts, err := l.list(l.raw)
		if err != nil {
			return out, err
		}
		s := &shard{rel: l.rel + " (synthetic)"}
		for _, t := range ts {
			s.tensors = append(s.tensors, &safetensors.Tensor{Name: t.name, DType: l.dtype, Shape: t.shape})
		}
		out[i] = []*shard{s}
	}
	return out, nil
}

// writeSynthetic adds the blobs, every tensor's random payload, the header and the vocab.
func writeSynthetic(ctx context.Context, w *cmf.Writer, header cmf.Header, j *job, opts SyntheticOptions, start time.Time) (*Result, error) {
	res := &Result{BytesByDType: map[quant.DType]int64{}}
	m := &meter{report: opts.Progress, start: start}
	m.state.TensorsTotal = len(j.blobs) + len(j.items)
	for _, it := range j.items {
		m.state.BytesTotal += 4 * countElements(it.shape)
		if it.dtype == quant.Q8_2F {
			m.state.BytesTotal += 4 * countElements(it.shape) // its column field takes a first pass
		}
	}
	for _, b := range j.blobs {
		if err := w.AddTensor(b.name, quant.U8, []int{len(b.data)}, b.data); err != nil {
			return nil, err
		}
		res.BytesByDType[quant.U8] += int64(len(b.data))
		m.state.TensorsDone++
	}
	for _, it := range j.items {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m.state.Tensor = it.out
		m.emit()
		size, _ := quant.PayloadSize(it.dtype, it.shape)
		src := newRandomRows(ctx, it, opts.Seed, m)
		pr, pw := io.Pipe()
		encoded := make(chan error, 1)
		go func() {
			err := quant.EncodeTo(pw, it.dtype, it.shape, src.rows)
			pw.CloseWithError(err)
			encoded <- err
		}()
		err := w.AddTensorFrom(it.out, it.dtype, it.shape, size, pr)
		pr.CloseWithError(errWriterStopped)
		if encErr := <-encoded; encErr != nil && encErr != errWriterStopped {
			return nil, fmt.Errorf("encoding synthetic %s as %v: %w", it.out, it.dtype, encErr)
		}
		if err != nil {
			return nil, err
		}
		res.BytesByDType[it.dtype] += size
		m.state.TensorsDone++
	}
	m.state.Tensor = ""
	m.emit()
	if err := w.SetHeader(header); err != nil {
		return nil, err
	}
	w.SetVocab(j.configs.tokenizer)
	res.Tensors = m.state.TensorsTotal
	return res, nil
}

func countElements(shape []int) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= int64(d)
	}
	return n
}

// randomRows serves one tensor's synthetic values, row by row, the same on every call: each row
// has its own generator seeded from the tensor's name and the row, so the encoders may read a
// row twice (q8_2f does) and rows may be made on every core.
type randomRows struct {
	ctx   context.Context
	seed  uint64
	cols  int
	fill  func(rng *splitMix, dst []float32) // one row
	meter *meter
	mu    sync.Mutex
}

func newRandomRows(ctx context.Context, it item, seed uint64, m *meter) *randomRows {
	h := fnv.New64a()
	h.Write([]byte(it.out))
	r := &randomRows{ctx: ctx, seed: seed ^ h.Sum64(), cols: (&quant.Tensor{Shape: it.shape}).Cols(), meter: m}
	r.fill = fillRule(it.src.Name, it.shape, r.cols)
	return r
}

// rows is a quant.RowSource.
func (r *randomRows) rows(r0, r1 int, dst []float32) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	workers := min(runtime.GOMAXPROCS(0), r1-r0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for row := r0 + w; row < r1; row += workers {
				rng := splitMix(r.seed ^ (uint64(row)+1)*0x9e3779b97f4a7c15)
				r.fill(&rng, dst[(row-r0)*r.cols:(row-r0+1)*r.cols])
			}
		})
	}
	wg.Wait()
	r.mu.Lock()
	r.meter.add(int64(4 * (r1 - r0) * r.cols))
	r.mu.Unlock()
	return nil
}

// fillRule chooses how a tensor's values are drawn, from its source name and shape, so that
// activations stay finite and of ordinary size through every layer: norm weights 1 (the DiT's
// zero-centred text norm 0), biases 0, the token embedding of unit variance, the shared
// modulation small (gates near 0.1), and every other weight uniform with variance 1/fan_in.
func fillRule(name string, shape []int, cols int) func(*splitMix, []float32) {
	constant := func(v float32) func(*splitMix, []float32) {
		return func(_ *splitMix, dst []float32) {
			for i := range dst {
				dst[i] = v
			}
		}
	}
	uniform := func(std float64) func(*splitMix, []float32) {
		a := float32(std * math.Sqrt(3))
		return func(rng *splitMix, dst []float32) {
			for i := range dst {
				dst[i] = a * rng.symmetric()
			}
		}
	}
	vector := len(shape) == 1 || strings.HasSuffix(name, ".gamma")
	switch {
	case vector && name == "txt_in.text_norm.weight":
		return constant(0)
	case vector && (strings.Contains(name, "norm") || strings.HasSuffix(name, ".gamma")):
		return constant(1)
	case strings.HasSuffix(name, ".bias"):
		return constant(0)
	case strings.HasSuffix(name, "embed_tokens.weight"):
		return uniform(1)
	case name == "modulation.1.weight":
		return uniform(0.3 / math.Sqrt(float64(cols)))
	}
	return uniform(1 / math.Sqrt(float64(cols)))
}

// splitMix is SplitMix64: fast, and good enough for weights nobody reads.
type splitMix uint64

func (s *splitMix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// symmetric is uniform in [−1, 1).
func (s *splitMix) symmetric() float32 {
	return float32(int32(s.next()>>32)) * (1.0 / (1 << 31))
}
