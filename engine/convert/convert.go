// Package convert turns a Hugging Face Qwen-Image-2.1 snapshot (bf16 safetensors, sharded or not)
// into one .cmf file in cortiq's layout (docs/reference/cmf.md §10): configs as u8 JSON tensors, then
// the DiT, the text encoder and vision tower, and the VAE, with codecs chosen by a Profile, and
// processor/tokenizer.json in the vocab section.
//
// Conversion streams: tensors are read from the shards with ReadAt one at a time, a few hundred
// rows at a time, encoded on all cores and piped into engine/cmf's streaming writer, so memory is
// a few blocks of rows whatever the size of the snapshot or of its largest tensor. The file is written under a
// temporary name and renamed only when complete; an error or a cancelled context leaves nothing.
package convert

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"easel/engine/cmf"
	"easel/engine/quant"
)

// Options tune a conversion. The zero value converts with ProfileCortiq, vision tower included.
type Options struct {
	Profile  Profile
	NoVision bool           // leave the vision tower out (text-to-image only files)
	Progress func(Progress) // called one call at a time, from the converting goroutines; nil for none
}

// Result describes a finished conversion.
type Result struct {
	Path         string
	Tensors      int   // tensors written, config blobs included
	FileBytes    int64 // size of the .cmf
	SourceBytes  int64 // weight bytes read from the snapshot
	BytesByDType map[quant.DType]int64
	Skipped      []string // source tensors left out, each with its file and the reason
	Elapsed      time.Duration
}

// Convert writes the snapshot at dir as one .cmf file at out.
func Convert(ctx context.Context, dir, out string, opts Options) (*Result, error) {
	start := time.Now()
	job, err := prepare(dir, opts)
	if err != nil {
		return nil, err
	}
	defer job.close()
	header, err := buildHeader(dir, job.profile, job.configs, job.vision)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a folder: give the path of the .cmf file to write, e.g. %s", out, filepath.Join(out, "qwen-image-2.1.cmf"))
	}
	if err := checkFreeSpace(out, job.outputBound()); err != nil {
		return nil, err
	}
	w, err := cmf.Create(out, job.writerOptions())
	if err != nil {
		return nil, err
	}
	res, err := write(ctx, w, header, job.blobs, job.items, job.configs.tokenizer, opts.Progress, start)
	if err != nil {
		w.Abort()
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, fmt.Errorf("conversion cancelled; %s was not written: %w", out, err)
		}
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	st, err := os.Stat(out)
	if err != nil {
		return nil, err
	}
	res.Path, res.FileBytes, res.Skipped, res.Elapsed = out, st.Size(), job.skipped, time.Since(start)
	return res, nil
}

// job is a planned conversion: the snapshot's configs, its open shards and the output tensors.
type job struct {
	profile    Profile
	vision     bool
	configs    *snapshotConfigs
	components [3][]*shard // transformer, text encoder, VAE
	items      []item
	skipped    []string
	blobs      []blob
}

// prepare reads the snapshot's configs and safetensors headers (no weights) and plans the output.
func prepare(dir string, opts Options) (*job, error) {
	j := &job{profile: opts.Profile, vision: !opts.NoVision}
	if j.profile == "" {
		j.profile = ProfileCortiq
	}
	if _, err := ParseProfile(string(j.profile)); err != nil {
		return nil, err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder: choose the folder of a Qwen-Image-2.1 snapshot", dir)
	}
	var err error
	if j.configs, err = readConfigs(dir); err != nil {
		return nil, err
	}
	for i, c := range []component{transformerComponent, textEncoderComponent, vaeComponent} {
		if j.components[i], err = openComponent(dir, c); err != nil {
			j.close()
			return nil, err
		}
	}
	j.items, j.skipped, err = plan(j.components[0], j.components[1], j.components[2], j.profile.codecs(), j.vision)
	if err == nil {
		j.blobs, err = j.configs.blobs(j.vision)
	}
	if err != nil {
		j.close()
		return nil, err
	}
	return j, nil
}

// close releases the shards.
func (j *job) close() {
	for _, c := range j.components {
		for _, s := range c {
			s.close()
		}
	}
}

// writerOptions sizes the head the way cortiq does, for this many tensors.
func (j *job) writerOptions() cmf.Options {
	return cmf.Options{ExpectedTensors: len(j.blobs) + len(j.items)}
}

// outputBound bounds the output file's size: the reserved head, every payload rounded up to the
// largest alignment, and the vocab.
func (j *job) outputBound() int64 {
	total := cmf.HeadReserveFor(j.writerOptions().ExpectedTensors, 64) + int64(len(j.configs.tokenizer))
	for _, b := range j.blobs {
		total += int64(len(b.data)) + cmf.DataAlignment
	}
	for _, it := range j.items {
		size, _ := quant.PayloadSize(it.dtype, it.shape)
		total += size + cmf.DataAlignment
	}
	return total
}

// buildHeader is the header JSON of the output file.
func buildHeader(dir string, p Profile, c *snapshotConfigs, vision bool) (cmf.Header, error) {
	arch, err := c.arch()
	if err != nil {
		return cmf.Header{}, err
	}
	prov, err := provenance(dir, p, c, vision)
	if err != nil {
		return cmf.Header{}, err
	}
	return cmf.Header{Arch: arch, QuantType: p.quantType(), Provenance: prov}, nil
}

// write adds every tensor, the header and the vocab to w.
func write(ctx context.Context, w *cmf.Writer, header cmf.Header, blobs []blob, items []item, vocab []byte, report func(Progress), start time.Time) (*Result, error) {
	res := &Result{BytesByDType: map[quant.DType]int64{}}
	m := &meter{report: report, start: start}
	m.state.TensorsTotal = len(blobs) + len(items)
	for _, it := range items {
		m.state.BytesTotal += int64(len(it.src.Data))
		if it.dtype == quant.Q8_2F {
			m.state.BytesTotal += int64(len(it.src.Data)) // its column field takes a first pass
		}
	}
	for _, b := range blobs {
		if err := w.AddTensor(b.name, quant.U8, []int{len(b.data)}, b.data); err != nil {
			return nil, err
		}
		res.BytesByDType[quant.U8] += int64(len(b.data))
		m.state.TensorsDone++
	}
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m.state.Tensor = it.out
		m.emit()
		size, _ := quant.PayloadSize(it.dtype, it.shape)
		if src, _ := sourceDType(it.src.DType); src == it.dtype {
			if err := w.AddTensorFrom(it.out, it.dtype, it.shape, size, newRawReader(ctx, it.shard, it.src, m)); err != nil {
				return nil, err
			}
		} else if err := addEncoded(ctx, w, it, size, m); err != nil {
			return nil, err
		}
		res.BytesByDType[it.dtype] += size
		res.SourceBytes += int64(len(it.src.Data))
		m.state.TensorsDone++
	}
	m.state.Tensor = ""
	m.emit()
	if err := w.SetHeader(header); err != nil {
		return nil, err
	}
	w.SetVocab(vocab)
	res.Tensors = m.state.TensorsTotal
	return res, nil
}

// addEncoded encodes one tensor into its codec on the fly: quant.EncodeTo streams the payload
// through a pipe into the writer, so no payload is ever whole in memory.
func addEncoded(ctx context.Context, w *cmf.Writer, it item, size int64, m *meter) error {
	r := &rowReader{ctx: ctx, s: it.shard, t: it.src, cols: (&quant.Tensor{Shape: it.shape}).Cols(), meter: m}
	pr, pw := io.Pipe()
	encoded := make(chan error, 1)
	go func() {
		err := quant.EncodeTo(pw, it.dtype, it.shape, r.rows)
		pw.CloseWithError(err)
		encoded <- err
	}()
	err := w.AddTensorFrom(it.out, it.dtype, it.shape, size, pr)
	pr.CloseWithError(errWriterStopped) // unblocks the encoder if the writer stopped early
	if encErr := <-encoded; encErr != nil && encErr != errWriterStopped {
		return fmt.Errorf("converting %s (%s) to %v: %w", it.src.Name, it.shard.rel, it.dtype, encErr)
	}
	return err
}

// errWriterStopped tells the encoder that nobody reads its output any more.
var errWriterStopped = errors.New("the model file writer stopped")
