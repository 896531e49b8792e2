package cmf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// image is a written sample file held in memory, with helpers to locate its parts.
type image struct {
	b   []byte
	env Envelope
	dir []Entry
}

func (im *image) u64(off uint64, v uint64) { binary.LittleEndian.PutUint64(im.b[off:], v) }

// record is the absolute offset of the directory record of the named tensor.
func (im *image) record(t *testing.T, name string) uint64 {
	for i, e := range im.dir {
		if e.Name == name {
			return im.env.Dir.Off + dirPreambleSize + uint64(i)*dirRecordSize
		}
	}
	t.Fatalf("no tensor %s in the sample", name)
	return 0
}

func (im *image) payload(t *testing.T, name string) uint64 {
	for _, e := range im.dir {
		if e.Name == name {
			return im.env.Data.Off + e.Offset
		}
	}
	t.Fatalf("no tensor %s in the sample", name)
	return 0
}

// replaceInHeader swaps equal-length text inside the header JSON.
func (im *image) replaceInHeader(t *testing.T, old, new string) {
	h := im.b[im.env.Header.Off:im.env.Header.End()]
	i := bytes.Index(h, []byte(old))
	if i < 0 || len(old) != len(new) {
		t.Fatalf("cannot replace %q in the header", old)
	}
	copy(h[i:], new)
}

// Every way of damaging a file gives an error of the right kind that names the file, the tensor at
// fault when there is one, and what to do — at Open, at Verify, or when the tensor is asked for.
// Never a panic.
func TestDamagedFiles(t *testing.T) {
	s := loadSample(t, "processor/tokenizer_config.json")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.cmf")
	s.write(t, good, Options{HeadReserve: 16 << 10})
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(good)
	if err != nil {
		t.Fatal(err)
	}
	base := image{env: f.Envelope(), dir: append([]Entry(nil), f.Entries()...)}
	f.Close()

	const q8 = "te.layers.0.mlp.gate_proj.weight"
	const q4 = "dit.transformer_blocks.0.img_mlp.proj.weight"
	cases := []struct {
		name    string
		damage  func(t *testing.T, im *image)
		kind    error
		stage   string // "open", "verify" or "tensor"
		tensor  string // must appear in the message
		mention string // must appear in the message
	}{
		{"truncated mid-data", func(t *testing.T, im *image) { im.b = im.b[:im.env.Data.Off+im.env.Data.Len/2] }, ErrTruncated, "open", "", "truncated at"},
		{"truncated in the envelope", func(t *testing.T, im *image) { im.b = im.b[:100] }, ErrTruncated, "open", "", "128-byte"},
		{"empty file", func(t *testing.T, im *image) { im.b = im.b[:0] }, ErrNotCMF, "open", "", "magic"},
		{"wrong magic", func(t *testing.T, im *image) { copy(im.b, "GGUF") }, ErrNotCMF, "open", "", "magic"},
		{"version 3", func(t *testing.T, im *image) { binary.LittleEndian.PutUint32(im.b[4:], 3) }, ErrUnsupported, "open", "", "version 3"},
		{"loop masks feature", func(t *testing.T, im *image) { im.b[12] |= 1 << 5 }, ErrUnsupported, "open", "", "LOOP_MASKS"},
		{"unassigned feature bit", func(t *testing.T, im *image) { im.b[14] |= 1 << 4 }, ErrUnsupported, "open", "", "bit20"},
		{"header length huge", func(t *testing.T, im *image) { im.u64(0x18, 1<<62) }, ErrCorrupt, "open", "", "header section"},
		{"vocab offset overflows", func(t *testing.T, im *image) { im.u64(0x50, ^uint64(0)-5) }, ErrCorrupt, "open", "", "vocab section"},
		{"no directory", func(t *testing.T, im *image) { im.u64(0x28, 0) }, ErrCorrupt, "open", "", "no directory section"},
		{"directory overlaps header", func(t *testing.T, im *image) { im.u64(0x20, im.env.Header.Off+1) }, ErrCorrupt, "open", "", "overlaps"},
		{"vocab overlaps directory", func(t *testing.T, im *image) { im.u64(0x50, im.env.Dir.Off) }, ErrCorrupt, "open", "", "overlaps"},
		{"section inside the envelope", func(t *testing.T, im *image) { im.u64(0x50, 64) }, ErrCorrupt, "open", "", "envelope"},
		{"data misaligned", func(t *testing.T, im *image) { im.u64(0x30, im.env.Data.Off+64) }, ErrCorrupt, "open", "", "multiple of 4096"},
		{"tensor count huge", func(t *testing.T, im *image) { im.u64(im.env.Dir.Off, 1<<60) }, ErrCorrupt, "open", "", "claims 1152921504606846976 tensors"},
		{"name pool outside directory", func(t *testing.T, im *image) { im.u64(im.env.Dir.Off+8, 1<<40) }, ErrCorrupt, "open", "", "name pool"},
		{"name outside pool", func(t *testing.T, im *image) {
			binary.LittleEndian.PutUint32(im.b[im.record(t, q8):], 1<<30)
		}, ErrCorrupt, "open", "", "outside the"},
		{"duplicate name", func(t *testing.T, im *image) {
			copy(im.b[im.record(t, q4):im.record(t, q4)+6], im.b[im.record(t, q8):im.record(t, q8)+6])
		}, ErrCorrupt, "open", q8, "twice"},
		{"unknown dtype", func(t *testing.T, im *image) { im.b[im.record(t, q8)+6] = 77 }, ErrCorrupt, "open", q8, "unknown dtype id 77"},
		{"seven dimensions", func(t *testing.T, im *image) { im.b[im.record(t, q8)+7] = 7 }, ErrCorrupt, "open", q8, "7 dimensions"},
		{"payload size wrong for q4tp", func(t *testing.T, im *image) { im.u64(im.record(t, q4)+40, 1000) }, ErrCorrupt, "open", q4, "needs exactly"},
		{"q4tp shape unsuitable", func(t *testing.T, im *image) { binary.LittleEndian.PutUint32(im.b[im.record(t, q4)+12:], 250) }, ErrCorrupt, "open", q4, "does not suit"},
		{"payload offset misaligned", func(t *testing.T, im *image) { im.u64(im.record(t, q8)+32, im.dir[5].Offset+8) }, ErrCorrupt, "open", q8, "not a multiple of 64"},
		{"payload beyond data", func(t *testing.T, im *image) { im.u64(im.record(t, q8)+32, im.env.Data.Len) }, ErrCorrupt, "open", q8, "outside the"},
		{"payload length huge", func(t *testing.T, im *image) { im.u64(im.record(t, "vae.empty")+40, ^uint64(0)-63) }, ErrCorrupt, "open", "vae.empty", "outside the"},
		{"header not JSON", func(t *testing.T, im *image) { im.b[im.env.Header.Off] = '[' }, ErrCorrupt, "open", "", "header JSON"},
		{"header lacks quant_type", func(t *testing.T, im *image) { im.replaceInHeader(t, `"quant_type"`, `"quant_typX"`) }, ErrCorrupt, "open", "", `"quant_type"`},
		{"header lacks arch field", func(t *testing.T, im *image) { im.replaceInHeader(t, `"head_dim"`, `"head_diX"`) }, ErrCorrupt, "open", "", `"head_dim"`},
		{"header quant_type unknown", func(t *testing.T, im *image) { im.replaceInHeader(t, `"Q4_BLOCK"`, `"Q4_BLOCX"`) }, ErrCorrupt, "open", "", "Q4_BLOCX"},
		{"header negative size", func(t *testing.T, im *image) { im.replaceInHeader(t, `"hidden_size":32`, `"hidden_size":-2`) }, ErrCorrupt, "open", "", "hidden_size"},
		{"split model shard", func(t *testing.T, im *image) {
			old := `"provenance":{"tool":"easel test","pipeline":"qwen-image-2.1"`
			prefix := `"shard":{"no":2,"count":3},"provenance":{"tool":"`
			im.replaceInHeader(t, old, prefix+strings.Repeat("x", len(old)-len(prefix)-1)+`"`)
		}, ErrUnsupported, "open", "", "shard 2 of 3"},
		{"tensor bytes flipped", func(t *testing.T, im *image) { im.b[im.payload(t, q8)+17] ^= 0x40 }, ErrHash, "verify", q8, "does not match its hash"},
		{"two tensors flipped", func(t *testing.T, im *image) {
			im.b[im.payload(t, q4)+1] ^= 1
			im.b[im.payload(t, q8)] ^= 1
		}, ErrHash, "verify", q8, `1 more fail too: "dit.transformer_blocks.0.img_mlp.proj.weight"`},
		{"vocab flipped", func(t *testing.T, im *image) { im.b[im.env.Vocab.Off+3] ^= 1 }, ErrHash, "verify", "", "vocab section"},
		{"header edited", func(t *testing.T, im *image) { im.replaceInHeader(t, "easel test", "eas3l test") }, ErrHash, "verify", "", "header section"},
		{"directory edited", func(t *testing.T, im *image) { im.b[im.record(t, q8)+50] ^= 1 }, ErrHash, "verify", "", "directory section"},
		{"vocab hash not hex", func(t *testing.T, im *image) {
			h := im.b[im.env.Header.Off:im.env.Header.End()]
			i := bytes.Index(h, []byte(`"vocab":"`)) + len(`"vocab":"`)
			h[i] = 'z'
		}, ErrCorrupt, "verify", "", "not 16 hex digits"},
		{"required tensor missing", func(t *testing.T, im *image) {}, ErrMissing, "tensor", "dit.img_in.weight.missing", "convert"},
		{"component missing", func(t *testing.T, im *image) {}, ErrMissing, "tensor", "vis.patch_embed.weight", `no "vis" component`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			im := base
			im.b = bytes.Clone(orig)
			c.damage(t, &im)
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".cmf")
			if err := os.WriteFile(path, im.b, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Open(path)
			if err == nil {
				defer f.Close()
				switch c.stage {
				case "verify":
					err = f.Verify(nil)
				case "tensor":
					_, err = f.Tensor(c.tensor)
				default:
					err = f.Verify(nil)
					t.Errorf("Open accepted the damaged file (Verify says %v)", err)
					return
				}
			} else if c.stage != "open" {
				t.Fatalf("Open refused a file only %s should refuse: %v", c.stage, err)
			}
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("error %q is not %v", msg, c.kind)
			}
			var e *Error
			if !errors.As(err, &e) || e.Path != path || !strings.HasPrefix(msg, path) {
				t.Errorf("error %q does not start with the file's path", msg)
			}
			if c.tensor != "" && !strings.Contains(msg, `"`+c.tensor+`"`) {
				t.Errorf("error %q does not name tensor %q", msg, c.tensor)
			}
			if !strings.Contains(msg, c.mention) {
				t.Errorf("error %q does not mention %q", msg, c.mention)
			}
			if e != nil && e.Advice == "" {
				t.Errorf("error %q says nothing about what to do", msg)
			}
		})
	}
}
