package convert

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/cmf"
	"easel/engine/quant"
	"easel/engine/safetensors"
)

// writeSafetensors writes tensors (in this order) as a safetensors file.
func writeSafetensors(t testing.TB, path string, tensors []*safetensors.Tensor) {
	t.Helper()
	header := map[string]any{}
	off := 0
	for _, tn := range tensors {
		header[tn.Name] = map[string]any{"dtype": tn.DType, "shape": tn.Shape, "data_offsets": []int{off, off + len(tn.Data)}}
		off += len(tn.Data)
	}
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(h)))
	b.Write(h)
	for _, tn := range tensors {
		b.Write(tn.Data)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// shardedTinySnapshot is the tiny snapshot with its transformer split into two shards and an
// index, everything else linked to the original.
func shardedTinySnapshot(t *testing.T) string {
	t.Helper()
	orig := tinySnapshot(t)
	dir := t.TempDir()
	for _, rel := range []string{"model_index.json", "processor", "scheduler", "text_encoder", "vae"} {
		abs, _ := filepath.Abs(filepath.Join(orig, rel))
		if err := os.Symlink(abs, filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, "transformer"), 0o755)
	cfg, _ := os.ReadFile(filepath.Join(orig, "transformer", "config.json"))
	os.WriteFile(filepath.Join(dir, "transformer", "config.json"), cfg, 0o644)
	st, err := safetensors.Open(filepath.Join(orig, "transformer", "diffusion_pytorch_model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var all []*safetensors.Tensor
	for _, n := range st.Names() {
		all = append(all, st.Tensor(n))
	}
	half := len(all) / 2
	shards := map[string][]*safetensors.Tensor{
		"diffusion_pytorch_model-00001-of-00002.safetensors": all[:half],
		"diffusion_pytorch_model-00002-of-00002.safetensors": all[half:],
	}
	weightMap := map[string]string{}
	for file, ts := range shards {
		writeSafetensors(t, filepath.Join(dir, "transformer", file), ts)
		for _, tn := range ts {
			weightMap[tn.Name] = file
		}
	}
	index, _ := json.Marshal(map[string]any{"metadata": map[string]any{}, "weight_map": weightMap})
	os.WriteFile(filepath.Join(dir, "transformer", "diffusion_pytorch_model.safetensors.index.json"), index, 0o644)
	return dir
}

// A sharded component converts to the same tensors, in the same order, as the single file.
func TestShardedSnapshotMatchesSingleFile(t *testing.T) {
	single, _ := convertTiny(t, ProfileCortiq)
	out := filepath.Join(t.TempDir(), "sharded.cmf")
	if _, err := Convert(context.Background(), shardedTinySnapshot(t), out, Options{}); err != nil {
		t.Fatal(err)
	}
	a, err := cmf.Open(single)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := cmf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ea, eb := a.Entries(), b.Entries()
	if len(ea) != len(eb) {
		t.Fatalf("%d tensors from the single file, %d from shards", len(ea), len(eb))
	}
	for i := range ea {
		if ea[i].Name != eb[i].Name || ea[i].DType != eb[i].DType || ea[i].Hash != eb[i].Hash {
			t.Errorf("tensor %d: %s %v %x from the single file, %s %v %x from shards", i, ea[i].Name, ea[i].DType, ea[i].Hash, eb[i].Name, eb[i].DType, eb[i].Hash)
		}
	}
}

func TestIncompleteSnapshotsAreRefused(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(dir string)
		want   []string
	}{
		{"missing shard", func(dir string) {
			os.Remove(filepath.Join(dir, "transformer", "diffusion_pytorch_model-00002-of-00002.safetensors"))
		}, []string{"diffusion_pytorch_model-00002-of-00002.safetensors is missing", "index.json", "download the snapshot again"}},
		{"truncated shard", func(dir string) {
			p := filepath.Join(dir, "transformer", "diffusion_pytorch_model-00001-of-00002.safetensors")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, []string{"diffusion_pytorch_model-00001-of-00002.safetensors", "download the snapshot again"}},
		{"tensor not where the index says", func(dir string) {
			p := filepath.Join(dir, "transformer", "diffusion_pytorch_model.safetensors.index.json")
			b, _ := os.ReadFile(p)
			b = bytes.Replace(b, []byte(`"img_in.weight":"diffusion_pytorch_model-00001-of-00002.safetensors"`), []byte(`"img_in.weight":"diffusion_pytorch_model-00002-of-00002.safetensors"`), 1)
			os.WriteFile(p, b, 0o644)
		}, []string{`lacks tensor "img_in.weight"`}},
		{"not Qwen-Image-2.1", func(dir string) {
			os.Remove(filepath.Join(dir, "model_index.json"))
			os.WriteFile(filepath.Join(dir, "model_index.json"), []byte(`{"_class_name": "FluxPipeline"}`), 0o644)
		}, []string{`"FluxPipeline"`, "not Qwen-Image-2.1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := shardedTinySnapshot(t)
			c.break_(dir)
			outDir := t.TempDir()
			_, err := Convert(context.Background(), dir, filepath.Join(outDir, "out.cmf"), Options{})
			if err == nil {
				t.Fatal("converted an incomplete snapshot")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if left, _ := os.ReadDir(outDir); len(left) != 0 {
				t.Errorf("a refused conversion left %d files behind", len(left))
			}
		})
	}
}

// Cancelling mid-way stops the conversion with the context's error and leaves no file.
func TestCancelLeavesNoFile(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outDir := t.TempDir()
	calls := 0
	_, err := Convert(ctx, tinySnapshot(t), filepath.Join(outDir, "out.cmf"), Options{Progress: func(p Progress) {
		if calls++; p.TensorsDone > 40 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if left, _ := os.ReadDir(outDir); len(left) != 0 {
		t.Errorf("a cancelled conversion left %v behind", left)
	}
}

// Cancelling while a tensor's bytes are being copied (the f16 profile streams source bytes
// straight into the writer) is reported as a cancellation, not as a disk problem.
func TestCancelMidTensorIsACancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outDir := t.TempDir()
	_, err := Convert(ctx, tinySnapshot(t), filepath.Join(outDir, "out.cmf"), Options{Profile: ProfileF16, Progress: func(p Progress) {
		if p.BytesDone > 3<<20 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if strings.Contains(err.Error(), "disk space") {
		t.Errorf("a cancellation blamed the disk: %v", err)
	}
	if left, _ := os.ReadDir(outDir); len(left) != 0 {
		t.Errorf("a cancelled conversion left %v behind", left)
	}
}

func TestOutputThatIsAFolderIsRefused(t *testing.T) {
	dir := t.TempDir()
	_, err := Convert(context.Background(), tinySnapshot(t), dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("error %v, want one saying the output is a folder", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left %d files in the folder", len(left))
	}
}

func TestNotEnoughDiskSpaceIsRefused(t *testing.T) {
	err := checkFreeSpace(filepath.Join(t.TempDir(), "x.cmf"), 1<<62)
	if err == nil || !strings.Contains(err.Error(), "not enough free disk space") {
		t.Errorf("error %v, want one about free disk space", err)
	}
	if err := checkFreeSpace(filepath.Join(t.TempDir(), "x.cmf"), 1); err != nil {
		t.Errorf("one byte does not fit: %v", err)
	}
}

// VAE convolutions stored 5-D ([co, ci, 1, k, k], as some exports have them) keep their shape and
// convert like the 4-D ones.
func TestFiveDimensionalVAEWeights(t *testing.T) {
	dir := shardedTinySnapshot(t)
	orig := filepath.Join(tinySnapshot(t), "vae", "diffusion_pytorch_model.safetensors")
	st, err := safetensors.Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var tensors []*safetensors.Tensor
	for _, n := range st.Names() {
		tn := *st.Tensor(n)
		if len(tn.Shape) == 4 && strings.HasSuffix(n, ".weight") {
			tn.Shape = []int{tn.Shape[0], tn.Shape[1], 1, tn.Shape[2], tn.Shape[3]}
		}
		tensors = append(tensors, &tn)
	}
	os.Remove(filepath.Join(dir, "vae"))
	os.Mkdir(filepath.Join(dir, "vae"), 0o755)
	cfg, _ := os.ReadFile(filepath.Join(tinySnapshot(t), "vae", "config.json"))
	os.WriteFile(filepath.Join(dir, "vae", "config.json"), cfg, 0o644)
	writeSafetensors(t, filepath.Join(dir, "vae", "diffusion_pytorch_model.safetensors"), tensors)

	out := filepath.Join(t.TempDir(), "five.cmf")
	if _, err := Convert(context.Background(), dir, out, Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := cmf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e, ok := f.Entry("vae.decoder.conv_in.weight")
	if !ok || e.DType != quant.F16 || len(e.Shape) != 5 || e.Shape[2] != 1 {
		t.Fatalf("vae.decoder.conv_in.weight stored as %v %v", e.DType, e.Shape)
	}
	got, _ := f.Tensor("vae.decoder.conv_in.weight")
	dec, err := quant.Dequantize(got)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := st.Tensor("decoder.conv_in.weight").Float32s()
	for i := range want {
		if dec[i] != quant.HalfToFloat32(quant.Float32ToHalf(want[i])) {
			t.Fatalf("value %d: %g, want %g rounded to f16", i, dec[i], want[i])
		}
	}
}
