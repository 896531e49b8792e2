package golden

import (
	"fmt"
	"image"
	"path/filepath"
	"sort"
)

// UpscaleCase is one upscale_* reference case (a NAME.ref.safetensors beside the weight files its
// meta names), every fact read from the case.
type UpscaleCase struct {
	Name     string
	Meta     map[string]any
	Input    *image.NRGBA // input_u8 (opaque when the case has 3 channels)
	Channels int          // input_u8's and output_u8's channels
	OutF32   []float32    // the network's RGB output before the clamp, [3, sH, sW]
	OutShape []int
	OutU8    []uint8 // the result, [sH, sW, Channels]
	// Files are the weight files (paths) with the key layout of each, in a stable order.
	Files   []string
	Layouts map[string]string
}

// UpscaleCases reads every upscale_*.ref.safetensors case of the golden directory.
func UpscaleCases() ([]*UpscaleCase, error) {
	paths, err := RefCases("upscale")
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		dir, _ := Dir()
		return nil, fmt.Errorf("no upscale_*.ref.safetensors case in %s", dir)
	}
	var out []*UpscaleCase
	for _, p := range paths {
		c, err := readUpscaleCase(p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func readUpscaleCase(p string) (*UpscaleCase, error) {
	c, err := Load(p)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	rc := &UpscaleCase{Name: c.Name, Meta: c.Meta, Layouts: map[string]string{}}
	in, err := c.Tensor("input_u8")
	if err != nil {
		return nil, err
	}
	if len(in.Shape) != 3 {
		return nil, fmt.Errorf("%s: input_u8 %v, want [H, W, C]", c.Name, in.Shape)
	}
	h, w, ch := in.Shape[0], in.Shape[1], in.Shape[2]
	if ch != 3 && ch != 4 {
		return nil, fmt.Errorf("%s: input_u8 has %d channels", c.Name, ch)
	}
	if hw := rc.Ints("input_hw"); len(hw) != 2 || hw[0] != h || hw[1] != w || rc.Int("channels") != ch {
		return nil, fmt.Errorf("%s: input_u8 %v disagrees with meta input_hw %v, channels %v", c.Name, in.Shape, c.Meta["input_hw"], c.Meta["channels"])
	}
	rc.Channels = ch
	rc.Input = image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < h*w; i++ {
		for k := 0; k < 4; k++ {
			v := uint8(255)
			if k < ch {
				v = in.Data[i*ch+k]
			}
			rc.Input.Pix[4*i+k] = v
		}
	}
	if rc.OutF32, rc.OutShape, err = c.Float32s("output_f32"); err != nil {
		return nil, err
	}
	u8, err := c.Tensor("output_u8")
	if err != nil {
		return nil, err
	}
	rc.OutU8 = append([]uint8(nil), u8.Data...)
	ws, _ := c.Meta["weights"].(map[string]any)
	for layout, files := range ws {
		list, _ := files.([]any)
		for _, f := range list {
			name, ok := f.(string)
			if !ok {
				return nil, fmt.Errorf("%s: meta weights %v", c.Name, ws)
			}
			path := filepath.Join(filepath.Dir(p), name)
			rc.Files = append(rc.Files, path)
			rc.Layouts[path] = layout
		}
	}
	if len(rc.Files) == 0 {
		return nil, fmt.Errorf("%s: meta names no weight files", c.Name)
	}
	sort.Strings(rc.Files)
	return rc, nil
}

// Int is the meta's number under key, or -1.
func (c *UpscaleCase) Int(key string) int {
	v, ok := c.Meta[key].(float64)
	if !ok {
		return -1
	}
	return int(v)
}

// Ints is the meta's list of numbers under key.
func (c *UpscaleCase) Ints(key string) []int {
	a, _ := c.Meta[key].([]any)
	out := make([]int, 0, len(a))
	for _, v := range a {
		f, _ := v.(float64)
		out = append(out, int(f))
	}
	return out
}

// Str is the meta's string under key.
func (c *UpscaleCase) Str(key string) string {
	s, _ := c.Meta[key].(string)
	return s
}

// U8Diff is the largest difference, in levels, between a picture and OutU8 (its Channels
// compared), and how many values differ.
func (c *UpscaleCase) U8Diff(got *image.NRGBA) (worst, differing int, err error) {
	n := got.Rect.Dx() * got.Rect.Dy()
	if n*c.Channels != len(c.OutU8) {
		return 0, 0, fmt.Errorf("a %v picture, the case's output has %d values of %d channels", got.Rect, len(c.OutU8), c.Channels)
	}
	for i := 0; i < n; i++ {
		for k := 0; k < c.Channels; k++ {
			d := int(got.Pix[4*i+k]) - int(c.OutU8[i*c.Channels+k])
			if d < 0 {
				d = -d
			}
			if d > 0 {
				differing++
			}
			worst = max(worst, d)
		}
	}
	return worst, differing, nil
}
