package upscale

import (
	"fmt"

	"easel/engine/ml"
)

// pass runs the network's ops in order, keeping the first error, and counts the activation memory
// it holds. With no backend it is a dry run: tensors are shapes, ops do nothing, and the count is
// the plan of the real run (the same allocations and frees in the same order).
type pass struct {
	be         Backend
	live, peak int64
	err        error
}

type dryTensor struct{ shape []int }

func (d *dryTensor) Shape() []int { return d.shape }

func elements(shape []int) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= int64(d)
	}
	return n
}

func (p *pass) new(shape ...int) ml.Tensor {
	p.live += 4 * elements(shape)
	p.peak = max(p.peak, p.live)
	if p.be == nil || p.err != nil {
		return &dryTensor{shape}
	}
	t, err := p.be.New(shape...)
	if err != nil {
		p.err = err
		return &dryTensor{shape}
	}
	return t
}

func (p *pass) slice(t ml.Tensor, off int, shape ...int) ml.Tensor {
	if p.be == nil || p.err != nil {
		return &dryTensor{shape}
	}
	v, err := p.be.Slice(t, off, shape...)
	if err != nil {
		p.err = err
		return &dryTensor{shape}
	}
	return v
}

func (p *pass) free(t ml.Tensor) {
	p.live -= 4 * elements(t.Shape())
	if _, dry := t.(*dryTensor); !dry && p.be != nil {
		p.be.Free(t)
	}
}

// do runs one op unless this is a dry run or an op failed.
func (p *pass) do(f func(b Backend) error) {
	if p.be == nil || p.err != nil {
		return
	}
	p.err = f(p.be)
}

// conv3 is dst = conv3×3(x) + bias of the named layer, as a new tensor.
func (m *Model) conv3(p *pass, name string, x ml.Tensor, out int) ml.Tensor {
	s := x.Shape()
	y := p.new(out, s[1], s[2])
	m.conv3into(p, name, y, x)
	return y
}

func (m *Model) conv3into(p *pass, name string, y, x ml.Tensor) {
	p.do(func(b Backend) error {
		c, ok := m.convs[name]
		if !ok {
			return fmt.Errorf("upscale: no layer %s", name)
		}
		return b.Conv2D(y, x, c.w, c.b, ml.SamePad(1))
	})
}

func (m *Model) lrelu(p *pass, x ml.Tensor) {
	p.do(func(b Backend) error { return b.LeakyReLU(x, x, 0.2) })
}

// forward runs the network on x [3, h, w] (h and w multiples of the unshuffle factor) and returns
// its output [3, Scale·h, Scale·w] before any clamp; x stays the caller's.
func (m *Model) forward(p *pass, x ml.Tensor) ml.Tensor {
	if m.cfg.Arch == SRVGGNetCompact {
		return m.srvgg(p, x)
	}
	return m.rrdbnet(p, x)
}

func (m *Model) rrdbnet(p *pass, x ml.Tensor) ml.Tensor {
	c := m.cfg
	nf := c.Features
	in := x
	if u := c.Unshuffle; u > 1 {
		s := x.Shape()
		in = p.new(3*u*u, s[1]/u, s[2]/u)
		p.do(func(b Backend) error { return b.PixelUnshuffle(in, x, u) })
	}
	feat := m.conv3(p, "conv_first", in, nf)
	if in != x {
		p.free(in)
	}
	cur := feat
	for i := 0; i < c.Blocks; i++ {
		next := m.rrdb(p, i, cur)
		if cur != feat {
			p.free(cur)
		}
		cur = next
	}
	trunk := m.conv3(p, "conv_body", cur, nf)
	if cur != feat {
		p.free(cur)
	}
	p.do(func(b Backend) error { return b.Add(feat, feat, trunk) })
	p.free(trunk)
	for u := 1; u <= c.Ups; u++ {
		s := feat.Shape()
		up := p.new(nf, 2*s[1], 2*s[2])
		p.do(func(b Backend) error { return b.UpsampleNearest(up, feat, 2) })
		p.free(feat)
		feat = m.conv3(p, fmt.Sprintf("conv_up%d", u), up, nf)
		p.free(up)
		m.lrelu(p, feat)
	}
	hr := m.conv3(p, "conv_hr", feat, nf)
	p.free(feat)
	m.lrelu(p, hr)
	out := m.conv3(p, "conv_last", hr, 3)
	p.free(hr)
	return out
}

// rrdb is block i: three residual dense blocks, then out·0.2 + x. x stays the caller's.
func (m *Model) rrdb(p *pass, i int, x ml.Tensor) ml.Tensor {
	nf, gc := m.cfg.Features, m.cfg.Growth
	s := x.Shape()
	h, w := s[1], s[2]
	hw := h * w
	a := x
	for k := 1; k <= 3; k++ {
		// cat holds x, x1 … x4 along the channels, so each conv reads a prefix of it.
		cat := p.new(nf+4*gc, h, w)
		head := p.slice(cat, 0, nf, h, w)
		p.do(func(b Backend) error { return b.Copy(head, a) })
		if a != x {
			p.free(a)
		}
		for j := 1; j <= 4; j++ {
			src := p.slice(cat, 0, nf+(j-1)*gc, h, w)
			dst := p.slice(cat, (nf+(j-1)*gc)*hw, gc, h, w)
			m.conv3into(p, fmt.Sprintf("body.%d.rdb%d.conv%d", i, k, j), dst, src)
			m.lrelu(p, dst)
		}
		x5 := m.conv3(p, fmt.Sprintf("body.%d.rdb%d.conv5", i, k), cat, nf)
		p.do(func(b Backend) error {
			if err := b.Scale(x5, x5, 0.2); err != nil {
				return err
			}
			return b.Add(x5, x5, head)
		})
		p.free(cat)
		a = x5
	}
	p.do(func(b Backend) error {
		if err := b.Scale(a, a, 0.2); err != nil {
			return err
		}
		return b.Add(a, a, x)
	})
	return a
}

func (m *Model) srvgg(p *pass, x ml.Tensor) ml.Tensor {
	c := m.cfg
	s := x.Shape()
	last := 2*c.Convs + 2
	cur := m.conv3(p, "body.0", x, c.Features)
	for i := 1; i < last; i += 2 {
		slope := m.slopes[fmt.Sprintf("body.%d", i)]
		p.do(func(b Backend) error { return b.PReLU(cur, cur, slope) })
		out := c.Features
		if i+1 == last {
			out = 3 * c.Scale * c.Scale
		}
		next := m.conv3(p, fmt.Sprintf("body.%d", i+1), cur, out)
		p.free(cur)
		cur = next
	}
	res := p.new(3, c.Scale*s[1], c.Scale*s[2])
	p.do(func(b Backend) error { return b.PixelShuffle(res, cur, c.Scale) })
	p.free(cur)
	up := p.new(3, c.Scale*s[1], c.Scale*s[2])
	p.do(func(b Backend) error {
		if err := b.UpsampleNearest(up, x, c.Scale); err != nil {
			return err
		}
		return b.Add(res, res, up)
	})
	p.free(up)
	return res
}
