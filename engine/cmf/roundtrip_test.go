package cmf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"easel/engine/quant"
)

// A file written by the streaming writer opens with every tensor, config blob and the vocab intact,
// in place, laid out by cortiq's rules, and verifies.
func TestWriteThenRead(t *testing.T) {
	s := loadSample(t, "processor/tokenizer.json")
	path := filepath.Join(t.TempDir(), "sample.cmf")
	s.write(t, path, Options{ExpectedTensors: len(s.tensors)})
	if _, err := os.Stat(path + ".partial"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the .partial file is left behind after Close: %v", err)
	}

	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	env := f.Envelope()
	if env.RequiredFeatures != FeatTensorDir|FeatQuant2F {
		t.Errorf("required_features = %v, want TENSOR_DIR|QUANT_2F (a q8_2f tensor is present)", env.RequiredFeatures)
	}
	if env.Header.Off != EnvelopeSize || env.Dir.Off != env.Header.End() {
		t.Errorf("header at %d and directory at %d; cortiq writes the header at 128 and the directory right after it", env.Header.Off, env.Dir.Off)
	}
	if want := uint64(HeadReserveFor(len(s.tensors), 64)); env.Data.Off != want {
		t.Errorf("data_off = %d, want head_reserve_for(%d, 64) = %d", env.Data.Off, len(s.tensors), want)
	}
	if env.Vocab.Off != env.Data.End() || !bytes.Equal(f.Vocab(), s.vocab) {
		t.Errorf("vocab section at %d (data ends at %d) or its bytes differ from tokenizer.json", env.Vocab.Off, env.Data.End())
	}
	if env.Masks.Len != 0 || env.Index.Len != 0 || env.Masks.Off != 0 || env.Index.Off != 0 {
		t.Errorf("absent sections must be written as (0, 0): masks %+v index %+v", env.Masks, env.Index)
	}
	if f.Size() != int64(env.Vocab.End()) {
		t.Errorf("file is %d bytes but its last section ends at %d", f.Size(), env.Vocab.End())
	}

	if got, want := f.Names(), names(s.tensors); !slices.Equal(got, want) {
		t.Fatalf("directory order %v, want the order written %v", got, want)
	}
	var prevEnd uint64
	for _, st := range s.tensors {
		e, ok := f.Entry(st.name)
		if !ok {
			t.Fatalf("%s missing", st.name)
		}
		align := uint64(64)
		if len(st.payload) >= 16384 {
			align = 4096
		}
		if e.Offset%align != 0 || e.Offset < prevEnd || e.Offset-prevEnd >= align {
			t.Errorf("%s: %d-byte payload at offset %d after %d; want the next multiple of %d", st.name, len(st.payload), e.Offset, prevEnd, align)
		}
		prevEnd = e.Offset + e.Size
		if e.Hash != Hash64(st.payload) {
			t.Errorf("%s: recorded hash %x, want %x", st.name, e.Hash, Hash64(st.payload))
		}
		tt, err := f.Tensor(st.name)
		if err != nil {
			t.Fatal(err)
		}
		if tt.DType != st.dtype || !slices.Equal(tt.Shape, st.shape) || !bytes.Equal(tt.Data, st.payload) {
			t.Errorf("%s: read back %s%v (%d bytes), wrote %s%v (%d bytes)", st.name, tt.DType, tt.Shape, len(tt.Data), st.dtype, st.shape, len(st.payload))
		}
		if len(tt.Data) > 0 && &tt.Data[0] != &f.Bytes()[env.Data.Off+e.Offset] {
			t.Errorf("%s: payload is a copy, not a slice of the mapping", st.name)
		}
	}
	if prevEnd != env.Data.Len {
		t.Errorf("data_len = %d, want the end of the last payload %d (no tail padding)", env.Data.Len, prevEnd)
	}

	for _, st := range s.tensors[:4] {
		cfg, err := f.ConfigJSON(st.name)
		if err != nil || !bytes.Equal(cfg, st.payload) {
			t.Errorf("ConfigJSON(%s) = %d bytes, %v; want the %d bytes written", st.name, len(cfg), err, len(st.payload))
		}
	}
	if _, err := f.ConfigJSON("te.embed_tokens.weight"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ConfigJSON of a q8_row tensor: %v, want ErrCorrupt", err)
	}

	h := f.Header()
	want := sampleHeader()
	if h.Arch.Name != "qwen_image21" || h.QuantType != "Q4_BLOCK" || h.Arch.RMSNormEps != 1e-6 || h.Arch.RopeTheta != 10000 ||
		h.Arch.PartialRotaryFactor != 1 || h.Arch.NormStyle != "qwen" || !slices.Equal(h.Arch.LayerTypes, want.Arch.LayerTypes) ||
		h.Arch.LinearConvKernelDim == nil || *h.Arch.LinearConvKernelDim != 0 {
		t.Errorf("header read back as %+v", h.Arch)
	}
	if h.SectionHashes == nil || h.SectionHashes.Vocab != strings.ToLower(h.SectionHashes.Vocab) || len(h.SectionHashes.Vocab) != 16 {
		t.Errorf("section_hashes = %+v, want a 16-digit lowercase vocab hash", h.SectionHashes)
	}

	var calls int
	var last, lastTotal int64
	err = f.Verify(func(done, total int64) {
		if done < last {
			t.Errorf("progress went backwards: %d after %d", done, last)
		}
		calls++
		last, lastTotal = done, total
	})
	if err != nil {
		t.Fatalf("Verify of a freshly written file: %v", err)
	}
	if calls == 0 || last != lastTotal {
		t.Errorf("progress ended at %d of %d after %d calls", last, lastTotal, calls)
	}
}

// The header JSON is what serde_json writes for cortiq's CmfHeader: compact, in declaration
// order, ryu floats, no HTML escaping (expected string written by hand from cmf.md §3).
func TestHeaderJSONIsSerdeShaped(t *testing.T) {
	h := sampleHeader()
	h.SectionHashes = &SectionHashes{Vocab: "00000000deadbeef"}
	got, err := h.marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"format":"cmf","version":2,"arch":{"arch_name":"qwen_image21","hidden_size":32,"intermediate_size":96,` +
		`"num_layers":2,"num_attention_heads":2,"num_kv_heads":1,"head_dim":128,"vocab_size":151936,` +
		`"layer_types":["FullAttention","FullAttention"],"rms_norm_eps":1e-6,"norm_style":"qwen","rope_theta":10000.0,` +
		`"tie_word_embeddings":false,"partial_rotary_factor":1.0,"max_position_embeddings":262144,` +
		`"linear_conv_kernel_dim":0,"linear_num_key_heads":0,"linear_num_value_heads":0},"quant_type":"Q4_BLOCK",` +
		`"provenance":{"tool":"easel test","pipeline":"qwen-image-2.1","note":"<&>"},"section_hashes":{"vocab":"00000000deadbeef"}}`
	if string(got) != want {
		t.Errorf("header JSON\n got %s\nwant %s", got, want)
	}
}

// Keys Easel does not model survive a read and a rewrite, in cortiq's field order.
func TestHeaderKeepsUnknownFields(t *testing.T) {
	in := `{"format":"cmf","version":2,"arch":{"arch_name":"x","hidden_size":1,"intermediate_size":2,"num_layers":3,` +
		`"num_attention_heads":4,"num_kv_heads":5,"head_dim":6,"vocab_size":7,"layer_types":[],"rms_norm_eps":0.00001,` +
		`"norm_style":"gemma","rope_theta":1000000.0,"tie_word_embeddings":true,"partial_rotary_factor":0.25,` +
		`"hidden_act":"gelu_tanh","max_position_embeddings":8,"linear_conv_kernel_dim":null,"linear_num_key_heads":null,` +
		`"linear_num_value_heads":null,"num_loops":2},"quant_type":"F16","skills":[{"id":"a"}],"calibration":{"temperature":1.5},"future":{"x":[1,2]}}`
	h, err := parseHeader([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("rewrite changed the header\n got %s\nwant %s", out, in)
	}
}

// Write → read → write is byte-identical, whether payloads come as slices or from readers.
func TestRewriteIsByteIdentical(t *testing.T) {
	s := loadSample(t, "processor/tokenizer_config.json")
	dir := t.TempDir()
	a := filepath.Join(dir, "a.cmf")
	s.write(t, a, Options{HeadReserve: 64 << 10})
	fa, err := Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()

	for _, fromReader := range []bool{false, true} {
		b := filepath.Join(dir, "b.cmf")
		w, err := Create(b, Options{HeadReserve: int64(fa.Envelope().Data.Off)})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.SetHeader(*fa.Header()); err != nil {
			t.Fatal(err)
		}
		for _, e := range fa.Entries() {
			tt, err := fa.Tensor(e.Name)
			if err != nil {
				t.Fatal(err)
			}
			if fromReader {
				err = w.AddTensorFrom(e.Name, e.DType, e.Shape, int64(len(tt.Data)), &oneByteReader{tt.Data})
			} else {
				err = w.AddTensor(e.Name, e.DType, e.Shape, tt.Data)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		w.SetVocab(fa.Vocab())
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		ab, _ := os.ReadFile(a)
		bb, _ := os.ReadFile(b)
		if !bytes.Equal(ab, bb) {
			t.Errorf("fromReader=%v: the rewrite differs from the original (%d vs %d bytes)", fromReader, len(bb), len(ab))
		}
	}
}

// oneByteReader hands out its bytes one at a time, to exercise the streaming hash.
type oneByteReader struct{ b []byte }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, os.ErrClosed
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

// The writer refuses what cortiq's reader would refuse, before writing anything, and stays usable.
func TestWriterRefusesBadTensors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.cmf")
	w, err := Create(path, Options{HeadReserve: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.AddTensor("ok", quant.F32, []int{2}, make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		dtype   quant.DType
		shape   []int
		size    int
		mention string
	}{
		{"ok", quant.F32, []int{2}, 8, "already added"},
		{"", quant.F32, []int{2}, 8, "empty tensor name"},
		{"short", quant.Q4TP, []int{4, 64}, 100, "needs exactly"},
		{"cols", quant.Q4TP, []int{4, 33}, 100, "cannot write q4tp"},
		{"rank7", quant.F32, []int{1, 1, 1, 1, 1, 1, 1}, 4, "dimensions"},
		{"huge", quant.F32, []int{1 << 33}, 4, "does not fit"},
		{"vbit", quant.VBit, []int{4, 32}, 64, "cannot write vbit"},
		{"blob", quant.U8, []int{5}, 4, "u8 tensor"},
		{"bad\xff", quant.F32, []int{1}, 4, "UTF-8"},
		{"dtype", quant.DType(99), []int{1}, 4, "unknown dtype"},
	} {
		err := w.AddTensor(c.name, c.dtype, c.shape, make([]byte, c.size))
		if !errors.Is(err, ErrWrite) || !strings.Contains(err.Error(), c.mention) || !strings.Contains(err.Error(), path) {
			t.Errorf("AddTensor(%q, %s%v, %d bytes) = %v; want ErrWrite naming the file and mentioning %q", c.name, c.dtype, c.shape, c.size, err, c.mention)
		}
	}
	if err := w.SetHeader(Header{Arch: Arch{Name: "x"}, QuantType: "Q4TP"}); err == nil || !strings.Contains(err.Error(), "QuantType") {
		t.Errorf("SetHeader with quant_type Q4TP: %v; want a refusal (cortiq knows Q4_BLOCK, not Q4TP)", err)
	}
	badTokenizer := sampleHeader()
	badTokenizer.TokenizerConfig = []byte(`{"eos_token_ids":"151645"}`)
	if err := w.SetHeader(badTokenizer); err == nil || !strings.Contains(err.Error(), "eos_token_ids") {
		t.Errorf("SetHeader with a tokenizer_config cortiq cannot read: %v", err)
	}
	if err := w.SetHeader(sampleHeader()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("the writer should still finish after refused tensors: %v", err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !slices.Equal(f.Names(), []string{"ok"}) || f.RequiredFeatures() != FeatTensorDir {
		t.Errorf("names %v features %v; want just \"ok\" and TENSOR_DIR", f.Names(), f.RequiredFeatures())
	}
}

// A head that outgrows its reservation fails Close with a sentence saying how much to reserve,
// and leaves no file behind; Abort removes the partial file.
func TestWriterHeadOverflowAndAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "small.cmf")
	w, err := Create(path, Options{HeadReserve: 4096})
	if err != nil {
		t.Fatal(err)
	}
	w.SetHeader(sampleHeader())
	for i := range 80 {
		name := strings.Repeat("n", 40) + string(rune('A'+i%26)) + string(rune('a'+i/26))
		if err := w.AddTensor(name, quant.F32, []int{1}, make([]byte, 4)); err != nil {
			t.Fatal(err)
		}
	}
	err = w.Close()
	if !errors.Is(err, ErrWrite) || !strings.Contains(err.Error(), "HeadReserve of at least") {
		t.Errorf("Close with an overfull head: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left behind: %v", entries)
	}

	w, err = Create(path, Options{HeadReserve: 4096})
	if err != nil {
		t.Fatal(err)
	}
	w.AddTensor("x", quant.F32, []int{1}, make([]byte, 4))
	w.Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Abort left files behind: %v", entries)
	}
}

func names(ts []sampleTensor) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.name)
	}
	return out
}

var _ = binary.LittleEndian
