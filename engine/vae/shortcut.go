package vae

import (
	"fmt"
	"slices"

	"easel/engine/ml"
)

// The residual shortcuts of the Wan 2.2 autoencoder, reduced to one frame (spec §8.4, §8.5). Both
// are fixed linear maps with no weights in the checkpoint; they are derived here from the
// reference's reshape formulas rather than written out stage by stage.

// avgDown is AvgDown3D(in, out, ft, fs) on one frame: ft−1 zero frames are padded in front, every
// ft×fs×fs block is folded into channels and groups of G = in·ft·fs²/out folded channels are
// averaged. That is a stride-fs convolution with a constant kernel; pool is nil for the identity.
type avgDown struct {
	pool   *conv
	factor int
}

func newAvgDown(name string, in, out, ft, fs int) (*avgDown, error) {
	if ft == 1 && fs == 1 && in == out {
		return &avgDown{factor: 1}, nil
	}
	F := ft * fs * fs
	if in*F%out != 0 {
		return nil, fmt.Errorf("%s: AvgDown3D from %d to %d channels with factors t%d s%d does not divide into groups", name, in, out, ft, fs)
	}
	G := in * F / out
	w := make([]float32, out*in*fs*fs)
	for o := 0; o < out; o++ {
		for g := 0; g < G; g++ {
			f := o*G + g
			c, r := f/F, f%F
			tt, i, j := r/(fs*fs), (r/fs)%fs, r%fs
			if tt < ft-1 {
				continue // a padded zero frame
			}
			w[((o*in+c)*fs+i)*fs+j] += 1 / float32(G)
		}
	}
	pool, err := fixedConv(name, w, out, in, fs)
	if err != nil {
		return nil, err
	}
	return &avgDown{pool: pool, factor: fs}, nil
}

// forward is the shortcut of x at 1/factor the resolution: x itself for the identity, else a new
// activation owned by e.
func (a *avgDown) forward(e *ml.Scope, x ml.Tensor) ml.Tensor {
	if a.pool == nil {
		return x
	}
	return a.pool.apply(e, x, ml.ConvSpec{Stride: a.factor})
}

// dupUp is DupUp3D(in, out, ft, fs) on one frame with first_chunk: output pixel (o, fs·Y+i, fs·X+j)
// is input channel ⌊(o·F + (ft−1)·fs² + i·fs + j)/R⌋ at (Y, X), F = ft·fs², R = out·F/in. The
// positions (i, j) that share a channel map form a group: its channels are selected (a one-hot
// 1×1 convolution, skipped for the identity map), upsampled by nearest ×fs and, when there are
// several groups, masked to the group's positions.
type dupUp struct {
	factor int
	groups []dupGroup
}

type dupGroup struct {
	sel       *conv    // nil when the map is the identity
	positions [][2]int // the (i, j) of each fs×fs block this group fills
}

func newDupUp(name string, in, out, ft, fs int) (*dupUp, error) {
	F := ft * fs * fs
	if out*F%in != 0 {
		return nil, fmt.Errorf("%s: DupUp3D from %d to %d channels with factors t%d s%d does not repeat evenly", name, in, out, ft, fs)
	}
	R := out * F / in
	d := &dupUp{factor: fs}
	var maps [][]int
	for i := 0; i < fs; i++ {
		for j := 0; j < fs; j++ {
			m := make([]int, out)
			for o := range m {
				m[o] = (o*F + (ft-1)*fs*fs + i*fs + j) / R
			}
			k := slices.IndexFunc(maps, func(seen []int) bool { return slices.Equal(seen, m) })
			if k >= 0 {
				d.groups[k].positions = append(d.groups[k].positions, [2]int{i, j})
				continue
			}
			maps = append(maps, m)
			g := dupGroup{positions: [][2]int{{i, j}}}
			identity := in == out
			for o, c := range m {
				identity = identity && c == o
			}
			if !identity {
				w := make([]float32, out*in)
				for o, c := range m {
					w[o*in+c] = 1
				}
				sel, err := fixedConv(fmt.Sprintf("%s(channel map %d)", name, len(maps)-1), w, out, in, 1)
				if err != nil {
					return nil, err
				}
				g.sel = sel
			}
			d.groups = append(d.groups, g)
		}
	}
	return d, nil
}

// addTo adds the shortcut of x (at the input resolution) to dst (at factor× the resolution).
func (d *dupUp) addTo(e *ml.Scope, dst, x ml.Tensor) {
	if e.Err() != nil {
		return
	}
	c, h, w := chw(dst)
	for _, g := range d.groups {
		src := x
		if g.sel != nil {
			src = g.sel.same(e, x)
		}
		up := e.Temp(c, h, w)
		e.Do(e.B.UpsampleNearest(up, src, d.factor))
		if src != x {
			e.Free(src)
		}
		if len(d.groups) > 1 {
			d.mask(e, up, g)
		}
		e.Do(e.B.Add(dst, dst, up))
		e.Free(up)
	}
}

// mask zeroes the pixels of up [C, fs·H, fs·W] outside the group's block positions. Viewed as
// [C·H, fs·fs·W], each row holds the fs output rows of one input row, so one mask row covers all.
func (d *dupUp) mask(e *ml.Scope, up ml.Tensor, g dupGroup) {
	if e.Err() != nil {
		return
	}
	c, h, w := chw(up)
	fs := d.factor
	m := make([]float32, fs*w)
	for _, p := range g.positions {
		for x := p[1]; x < w; x += fs {
			m[p[0]*w+x] = 1
		}
	}
	row := e.Own(e.Upload(m, fs*w))
	view := e.Slice(up, 0, c*h/fs, fs*w)
	e.Do(e.B.Mul(view, view, row))
	e.Free(row)
}
