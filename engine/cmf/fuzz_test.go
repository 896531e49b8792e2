package cmf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"easel/engine/quant"
)

// tinyFile writes a few-kilobyte container: a config blob, one tensor of each main codec and a
// vocab. It seeds the fuzzer (the committed corpus under testdata/fuzz/FuzzOpen holds the same
// kind of files).
func tinyFile(t testing.TB, withVocab bool) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.cmf")
	w, err := Create(path, Options{HeadReserve: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetHeader(sampleHeader()); err != nil {
		t.Fatal(err)
	}
	cfg := []byte(`{"num_layers":2,"eps":1e-06}`)
	add := func(name string, d quant.DType, shape []int) {
		n, ok := quant.PayloadSize(d, shape)
		if d == quant.U8 {
			n, ok = int64(len(cfg)), true
		}
		if !ok {
			t.Fatalf("%s%v", d, shape)
		}
		p := make([]byte, n)
		copy(p, cfg)
		for i := len(cfg); i < len(p); i++ {
			p[i] = byte(i * 7)
		}
		if err := w.AddTensor(name, d, shape, p); err != nil {
			t.Fatal(err)
		}
	}
	add("dit.config_json", quant.U8, []int{len(cfg)})
	add("dit.blocks.0.q", quant.Q4TP, []int{2, 64})
	add("te.q8", quant.Q8_2F, []int{3, 4})
	add("te.emb", quant.Q8Row, []int{2, 3})
	add("vae.w", quant.F16, []int{2, 1, 1, 3})
	add("vae.b", quant.F32, []int{2})
	if withVocab {
		w.SetVocab([]byte(`{"model":{"vocab":{"a":0}}}`))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzOpen feeds arbitrary bytes to the reader: it must return a File or an error, never panic,
// never hand out a tensor outside the input, and accept everything it accepts consistently.
func FuzzOpen(f *testing.F) {
	good := tinyFile(f, true)
	f.Add(good)
	f.Add(tinyFile(f, false))
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := parse("fuzz.cmf", b)
		if err != nil {
			if file != nil {
				t.Fatal("parse returned both a file and an error")
			}
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %v is not a *cmf.Error", err)
			}
			return
		}
		for _, e := range file.Entries() {
			tt, err := file.Tensor(e.Name)
			if err != nil {
				t.Fatalf("listed tensor %q cannot be read: %v", e.Name, err)
			}
			if uint64(len(tt.Data)) != e.Size {
				t.Fatalf("tensor %q: %d bytes, directory says %d", e.Name, len(tt.Data), e.Size)
			}
			if e.DType == quant.U8 {
				file.ConfigJSON(e.Name)
			}
		}
		_ = file.Vocab()
		file.Verify(nil)
		// A header the reader accepts can be written again, and writing is stable.
		out, err := file.header.marshal()
		if err != nil {
			t.Fatalf("accepted header cannot be written again: %v", err)
		}
		again, err := parseHeader(out)
		if err != nil {
			t.Fatalf("rewritten header %s does not parse: %v", out, err)
		}
		out2, err := again.marshal()
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("header rewrite is not stable:\n%s\n%s (%v)", out, out2, err)
		}
	})
}

// FuzzHeader checks the header JSON reader and the serde-shaped writer directly: no panics, and a
// header the reader accepts is written out in a form that reads back to the same bytes.
func FuzzHeader(f *testing.F) {
	h := sampleHeader()
	h.SectionHashes = &SectionHashes{Vocab: "0123456789abcdef"}
	seed, err := h.marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"version":2,"arch":{"arch_name":"x","hidden_size":1,"intermediate_size":2,"num_layers":3,` +
		`"num_attention_heads":4,"num_kv_heads":5,"head_dim":6,"vocab_size":7,"layer_types":["Kda"],"rms_norm_eps":1e-300,` +
		`"max_position_embeddings":8,"partial_rotary_factor":3.4e38,"rope_theta":-0.0,"x":{"y":[1e400]}},"quant_type":"VBIT","z":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseHeader(b)
		if err != nil {
			return
		}
		out, err := h.marshal()
		if err != nil {
			t.Fatalf("accepted header cannot be written: %v", err)
		}
		again, err := parseHeader(out)
		if err != nil {
			t.Fatalf("written header %s does not read back: %v", out, err)
		}
		out2, err := again.marshal()
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("header rewrite is not stable:\n%s\n%s (%v)", out, out2, err)
		}
	})
}
