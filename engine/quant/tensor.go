package quant

// Tensor is one weight payload in a CMF codec. Data is read in place (usually a slice of a file
// mapping) and must not be written to. For 2-D codecs Shape is [rows, cols].
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []byte
}

// Source looks weights up by name: a .cmf file (engine/cmf), or an adapter over a Hugging Face
// snapshot in tests. Names follow cortiq's Qwen-Image-2.1 layout: "dit.*", "te.*", "vis.*", "vae.*".
type Source interface {
	Tensor(name string) (*Tensor, error)
}

// Rows and Cols view a tensor as 2-D: the first dimension against the product of the rest.
func (t *Tensor) Rows() int {
	if len(t.Shape) == 0 {
		return 1
	}
	return t.Shape[0]
}

// Cols is the product of every dimension after the first.
func (t *Tensor) Cols() int {
	c := 1
	for _, d := range t.Shape[min(1, len(t.Shape)):] {
		c *= d
	}
	return c
}
