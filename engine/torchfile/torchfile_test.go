package torchfile_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/safetensors"
	"easel/engine/torchfile"
	"easel/internal/golden"
)

// weightFiles lists every weight file an upscale_* case names in its meta ("weights": layout →
// files), by layout.
func weightFiles(t *testing.T) map[string][]string {
	t.Helper()
	paths, err := golden.RefCases("upscale")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no upscale_* reference cases: %v", err)
	}
	out := map[string][]string{}
	for _, p := range paths {
		c, err := golden.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		ws, _ := c.Meta["weights"].(map[string]any)
		if len(ws) == 0 {
			t.Fatalf("%s: meta has no weights", c.Name)
		}
		for layout, files := range ws {
			for _, f := range files.([]any) {
				out[layout] = append(out[layout], filepath.Join(filepath.Dir(p), f.(string)))
			}
		}
		c.Close()
	}
	return out
}

// TestStateDictMatchesSafetensors reads every .pth written by torch beside a .safetensors of the
// same layout and checks that they hold the same tensors, byte for byte.
func TestStateDictMatchesSafetensors(t *testing.T) {
	compared := 0
	for layout, files := range weightFiles(t) {
		var st []string
		var pth []string
		for _, f := range files {
			switch filepath.Ext(f) {
			case ".safetensors":
				st = append(st, f)
			case ".pth":
				pth = append(pth, f)
			}
		}
		for _, p := range pth {
			tensors, err := torchfile.StateDict(p)
			if err != nil {
				t.Fatalf("%s (%s): %v", p, layout, err)
			}
			// The .safetensors of the same case (its name up to the extension) when there is one.
			base := strings.TrimSuffix(p, ".pth")
			var ref string
			for _, s := range st {
				if strings.TrimSuffix(s, ".safetensors") == base {
					ref = s
				}
			}
			if ref == "" {
				if len(tensors) == 0 {
					t.Fatalf("%s: no tensors", p)
				}
				continue
			}
			f, err := safetensors.Open(ref)
			if err != nil {
				t.Fatal(err)
			}
			names := f.Names()
			if len(names) != len(tensors) {
				t.Fatalf("%s: %d tensors, %s has %d", p, len(tensors), ref, len(names))
			}
			for _, got := range tensors {
				want := f.Tensor(strings.TrimPrefix(got.Name, "params_ema."))
				if want == nil {
					t.Fatalf("%s: tensor %q is not in %s", p, got.Name, ref)
				}
				if got.DType != want.DType || !equalInts(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) {
					t.Fatalf("%s: tensor %q is %s %v, %s has %s %v (or the bytes differ)", p, got.Name, got.DType, got.Shape, ref, want.DType, want.Shape)
				}
			}
			f.Close()
			compared++
		}
	}
	if compared == 0 {
		t.Fatal("no .pth case had a .safetensors beside it to compare with")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkpoint writes a zip in torch's layout around the pickle program pkl.
func checkpoint(t *testing.T, pkl []byte, storages map[string][]byte) string {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	add := func(name string, b []byte) {
		w, err := z.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	add("archive/data.pkl", pkl)
	add("archive/version", []byte("3\n"))
	for k, b := range storages {
		add("archive/data/"+k, b)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "model.pth")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRefusesCode: a checkpoint whose pickle asks for os.system (GLOBAL + REDUCE, the classic
// payload), builtins.eval through STACK_GLOBAL, or a model class is refused with a sentence that
// names the global, and nothing runs (the command would create a file).
func TestRefusesCode(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := "touch " + marker
	unicode := func(s string) []byte { // BINUNICODE
		return append([]byte{'X', byte(len(s)), 0, 0, 0}, s...)
	}
	cases := map[string]struct {
		pkl    []byte
		global string
	}{
		"os.system":                    {append(append([]byte("\x80\x02cos\nsystem\nq\x00"), unicode(cmd)...), []byte("\x85R.")...), "os.system"},
		"posix.system in a state dict": {append(append([]byte("\x80\x02}q\x00X\x01\x00\x00\x00wcposix\nsystem\n"), unicode(cmd)...), []byte("\x85Rs.")...), "posix.system"},
		"builtins.eval (STACK_GLOBAL)": {append(append(append([]byte("\x80\x04"), unicode("builtins")...), unicode("eval")...), append([]byte{0x93}, append(unicode("print(1)"), []byte("\x85R.")...)...)...), "builtins.eval"},
		"a model class":                {[]byte("\x80\x02cbasicsr.archs.rrdbnet_arch\nRRDBNet\n)R."), "basicsr.archs.rrdbnet_arch.RRDBNet"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := torchfile.StateDict(checkpoint(t, c.pkl, nil))
			var refused *torchfile.RefusedError
			if !errors.As(err, &refused) || refused.Global != c.global {
				t.Fatalf("got %v, want a refusal of %s", err, c.global)
			}
			if !strings.Contains(err.Error(), c.global) || !strings.Contains(err.Error(), "nothing in it ran") {
				t.Fatalf("the message does not say what was refused: %v", err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the command ran")
			}
		})
	}
}

// TestBadFiles: an old-format checkpoint, a truncated one and files that are not checkpoints get
// sentences that say what to do.
func TestBadFiles(t *testing.T) {
	files := weightFiles(t)
	var pth string
	for _, fs := range files {
		for _, f := range fs {
			if filepath.Ext(f) == ".pth" {
				pth = f
			}
		}
	}
	whole, err := os.ReadFile(pth)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]struct {
		path string
		want string
	}{
		"old format":  {write("old.pth", []byte("\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.")), "before PyTorch 1.6"},
		"truncated":   {write("cut.pth", whole[:len(whole)/2]), "download it again"},
		"not a zip":   {write("text.pth", []byte("hello, this is not a model\n")), "not a PyTorch checkpoint"},
		"empty":       {write("empty.pth", nil), "too short"},
		"no data.pkl": {checkpointWithout(t), "no data.pkl"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := torchfile.StateDict(c.path)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
		})
	}
}

func checkpointWithout(t *testing.T) string {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	w, _ := z.Create("readme.txt")
	w.Write([]byte("hi"))
	z.Close()
	p := filepath.Join(t.TempDir(), "x.pth")
	os.WriteFile(p, buf.Bytes(), 0o644)
	return p
}

// TestStridedTensor: a tensor saved as a transposed view is read in its logical order.
func TestStridedTensor(t *testing.T) {
	// storage 0 holds 6 floats 0..5; the tensor is size (3, 2) stride (1, 3): the transpose of [[0 1 2] [3 4 5]].
	pkl := []byte("\x80\x02}q\x00X\x01\x00\x00\x00wctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x06tQK\x00K\x03K\x02\x86K\x01K\x03\x86\x89ccollections\nOrderedDict\n)RtRs.")
	st := make([]byte, 24)
	for i := 0; i < 6; i++ {
		copy(st[4*i:], safetensors.F32Tensor("", []int{1}, []float32{float32(i)}).Data)
	}
	tensors, err := torchfile.StateDict(checkpoint(t, pkl, map[string][]byte{"0": st}))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := tensors[0].Float32s()
	want := []float32{0, 3, 1, 4, 2, 5}
	for i := range want {
		if got[i] != want[i] || !equalInts(tensors[0].Shape, []int{3, 2}) {
			t.Fatalf("got %v %v, want %v [3 2]", got, tensors[0].Shape, want)
		}
	}
}
