package golden

import "fmt"

// DiTCase is one dit_* case decoded for a transformer test: the case itself (for its expected
// outputs), the text rows and latents the reference ran, the image-token mask, and the latent
// grids and σ of its metadata. The network's own tests build their layout from Mask and Shapes.
type DiTCase struct {
	*Case
	Text    []float32 // encoder_hidden_states [L, context]
	Latents []float32 // hidden_states: conditions then target, [latent rows, in channels]
	Mask    []bool    // img_mask: which text rows are image tokens
	Shapes  [][2]int  // latent grids (h, w): each condition image, then the target
	Sigmas  []float32 // the σ of full_out_i / cached_out_i, in order
}

// LoadDiT opens and decodes the dit case at path; Close the returned case's Case when done.
func LoadDiT(path string) (*DiTCase, error) {
	c, err := Load(path)
	if err != nil {
		return nil, err
	}
	dc, err := decodeDiT(c)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("case %s: %w", c.Name, err)
	}
	return dc, nil
}

func decodeDiT(c *Case) (*DiTCase, error) {
	dc := &DiTCase{Case: c}
	var err error
	if dc.Text, _, err = c.Float32s("encoder_hidden_states"); err != nil {
		return nil, err
	}
	if dc.Latents, _, err = c.Float32s("hidden_states"); err != nil {
		return nil, err
	}
	mt, err := c.Tensor("img_mask")
	if err != nil {
		return nil, err
	}
	dc.Mask = make([]bool, len(mt.Data))
	for i, b := range mt.Data {
		dc.Mask[i] = b != 0
	}
	spec, err := ParseDiT(c.Meta)
	if err != nil {
		return nil, err
	}
	dc.Shapes, dc.Sigmas = spec.Shapes, spec.Sigmas
	return dc, nil
}
