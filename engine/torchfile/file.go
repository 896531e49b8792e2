package torchfile

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"easel/engine/safetensors"
)

// maxPickle bounds data.pkl: a state dict's pickle is a few hundred kilobytes even for large
// networks, so a larger one is not a checkpoint of weights.
const maxPickle = 64 << 20

// StateDict reads the tensors of the checkpoint at path: the state dict it holds, or the one under
// its "params_ema", "params", "state_dict" or "model" key (in that order; training frameworks
// wrap it so). Tensors come back contiguous in their own element type (F32, F16, BF16, …) with
// their names, in the file's order; entries that are not tensors are left out.
func StateDict(file string) ([]*safetensors.Tensor, error) {
	tensors, err := readStateDict(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path.Base(file), err)
	}
	return tensors, nil
}

func readStateDict(file string) ([]*safetensors.Tensor, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var head [4]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return nil, errors.New("the file is too short to be a PyTorch checkpoint (it may be truncated: download it again)")
	}
	if !bytes.Equal(head[:], []byte("PK\x03\x04")) {
		if head[0] == 0x80 {
			return nil, errors.New("this is a PyTorch checkpoint in the format before PyTorch 1.6, which Easel does not read; re-save it with a current PyTorch (torch.save(torch.load(f), f)) or use a .safetensors copy")
		}
		return nil, errors.New("the file is not a PyTorch checkpoint (not a zip archive); use the .pth or .safetensors file of an upscaler")
	}
	z, err := zip.NewReader(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("the checkpoint's archive cannot be read (%v): the file is probably truncated; download it again", err)
	}
	files := map[string]*zip.File{}
	var pkl *zip.File
	for _, e := range z.File {
		files[e.Name] = e
		if path.Base(e.Name) == "data.pkl" && strings.Count(e.Name, "/") == 1 {
			if pkl != nil {
				return nil, errors.New("the checkpoint holds two data.pkl files")
			}
			pkl = e
		}
	}
	if pkl == nil {
		return nil, errors.New("the archive holds no data.pkl: it is a zip file but not a PyTorch checkpoint")
	}
	prefix := path.Dir(pkl.Name) + "/data/"
	if bo, ok := files[path.Dir(pkl.Name)+"/byteorder"]; ok {
		b, err := readEntry(bo, 16)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(string(b)) != "little" {
			return nil, fmt.Errorf("the checkpoint's storages are %s-endian; Easel reads little-endian ones", strings.TrimSpace(string(b)))
		}
	}
	prog, err := readEntry(pkl, maxPickle)
	if err != nil {
		return nil, err
	}
	root, err := unpickle(prog)
	if err != nil {
		return nil, err
	}
	sd, err := stateDictOf(root)
	if err != nil {
		return nil, err
	}
	storages := map[string][]byte{}
	var out []*safetensors.Tensor
	for i, k := range sd.keys {
		t, ok := sd.vals[i].(*tensorRef)
		if !ok {
			continue
		}
		name, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("a state dict key is a %s, not a name", kind(k))
		}
		data, ok := storages[t.st.key]
		if !ok {
			e, found := files[prefix+t.st.key]
			if !found {
				return nil, fmt.Errorf("tensor %q's storage data/%s is missing from the archive (the file is incomplete)", name, t.st.key)
			}
			want := t.st.numel * int64(t.st.size)
			if data, err = readEntry(e, want); err != nil {
				return nil, err
			}
			if int64(len(data)) < want {
				return nil, fmt.Errorf("tensor %q's storage holds %d bytes, %d expected (the file is truncated or damaged)", name, len(data), want)
			}
			storages[t.st.key] = data
		}
		out = append(out, materialize(name, t, data))
	}
	if len(out) == 0 {
		return nil, errors.New("the checkpoint holds no tensors")
	}
	return out, nil
}

// stateDictOf picks the dict of tensors out of what the pickle returned.
func stateDictOf(root any) (*dict, error) {
	d, ok := root.(*dict)
	if !ok {
		return nil, fmt.Errorf("the checkpoint holds a %s, not a dict of tensors", kind(root))
	}
	for _, k := range []string{"params_ema", "params", "state_dict", "model"} {
		if inner, ok := d.get(k).(*dict); ok {
			return inner, nil
		}
	}
	return d, nil
}

// readEntry reads a zip entry of at most limit bytes.
func readEntry(e *zip.File, limit int64) ([]byte, error) {
	if int64(e.UncompressedSize64) > limit {
		return nil, fmt.Errorf("%s holds %d bytes, more than the %d it may", e.Name, e.UncompressedSize64, limit)
	}
	r, err := e.Open()
	if err != nil {
		return nil, fmt.Errorf("%s cannot be read (%v): the file is damaged; download it again", e.Name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s cannot be read (%v): the file is truncated or damaged; download it again", e.Name, err)
	}
	return b, nil
}

// materialize copies a strided view of a storage into a contiguous tensor.
func materialize(name string, t *tensorRef, storage []byte) *safetensors.Tensor {
	es := t.st.size
	n := int64(1)
	shape := make([]int, len(t.shape))
	for i, d := range t.shape {
		n *= d
		shape[i] = int(d)
	}
	out := make([]byte, n*int64(es))
	if contiguous(t) { // the usual case: one copy
		copy(out, storage[t.offset*int64(es):])
		return &safetensors.Tensor{Name: name, DType: t.st.dtype, Shape: shape, Data: out}
	}
	idx := make([]int64, len(t.shape))
	for k := int64(0); k < n; k++ {
		src := t.offset
		for i := range idx {
			src += idx[i] * t.stride[i]
		}
		copy(out[k*int64(es):(k+1)*int64(es)], storage[src*int64(es):(src+1)*int64(es)])
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < t.shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return &safetensors.Tensor{Name: name, DType: t.st.dtype, Shape: shape, Data: out}
}

// contiguous says whether t's strides are the row-major ones of its shape.
func contiguous(t *tensorRef) bool {
	want := int64(1)
	for i := len(t.shape) - 1; i >= 0; i-- {
		if t.shape[i] != 1 && t.stride[i] != want {
			return false
		}
		want *= t.shape[i]
	}
	return true
}
