package vae

import (
	"fmt"

	"easel/engine/ml"
	"easel/engine/quant"
)

// conv is one convolution: its weight read in place (viewed as 4-D [out, in, k, k]) and its bias
// uploaded as one row.
type conv struct {
	w         *quant.Tensor
	bias      ml.Tensor
	in, out   int
	kernel    int
	qualified string // the weight's name, for errors
}

// loader binds weights by name: "vae." + the diffusers name.
type loader struct {
	src quant.Source
	b   ml.Backend
}

const namePrefix = "vae."

func (l *loader) tensor(name string) (*quant.Tensor, error) {
	t, err := l.src.Tensor(namePrefix + name)
	if err != nil {
		return nil, fmt.Errorf("vae weight %s%s: %v", namePrefix, name, err)
	}
	if t == nil {
		return nil, fmt.Errorf("vae weight %s%s is missing from the model file", namePrefix, name)
	}
	return t, nil
}

// conv loads name.weight ([out, in, k, k], or 5-D [out, in, 1, k, k]) and name.bias ([out]).
func (l *loader) conv(name string, in, out, kernel int) (*conv, error) {
	w, err := l.tensor(name + ".weight")
	if err != nil {
		return nil, err
	}
	s := w.Shape
	ok := len(s) == 4 && s[0] == out && s[1] == in && s[2] == kernel && s[3] == kernel
	ok = ok || len(s) == 5 && s[0] == out && s[1] == in && s[2] == 1 && s[3] == kernel && s[4] == kernel
	if !ok {
		return nil, fmt.Errorf("vae weight %s%s.weight has shape %v; the config calls for [%d, %d, %d, %d] (or 5-D [%d, %d, 1, %d, %d]): the file does not match its vae.config_json",
			namePrefix, name, s, out, in, kernel, kernel, out, in, kernel, kernel)
	}
	view := *w
	view.Shape = []int{out, in, kernel, kernel}
	bias, err := l.vector(name+".bias", out)
	if err != nil {
		return nil, err
	}
	return &conv{w: &view, bias: bias, in: in, out: out, kernel: kernel, qualified: namePrefix + name}, nil
}

// vector loads a tensor of n elements (a bias [n], or an RMS-norm gamma [n, 1, 1(, 1)]) as one row.
func (l *loader) vector(name string, n int) (ml.Tensor, error) {
	t, err := l.tensor(name)
	if err != nil {
		return nil, err
	}
	elems := 1
	for _, d := range t.Shape {
		elems *= d
	}
	if elems != n || len(t.Shape) == 0 || t.Shape[0] != n {
		return nil, fmt.Errorf("vae weight %s%s has shape %v; want %d values: the file does not match its vae.config_json", namePrefix, name, t.Shape, n)
	}
	flat := *t
	flat.Shape = []int{n}
	v, err := quant.Dequantize(&flat)
	if err != nil {
		return nil, fmt.Errorf("vae weight %s%s: %v", namePrefix, name, err)
	}
	return l.b.Upload(v, n)
}
