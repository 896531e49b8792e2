package upscale

// Plan is the memory an upscale needs, predicted from the geometry alone.
type Plan struct {
	// Weights is the network's float32 weights.
	Weights int64
	// Activations is the largest tile's peak of live activations: a dry run of the network's
	// own code (the same allocations and frees in the same order), plus the tile's input.
	Activations int64
	// Host is the pictures held on the host during the run: the input as float planes, the
	// 8-bit result, and one tile's output downloaded and cropped.
	Host int64
	// Tile is the padded tile the activations were planned for (input pixels).
	TileW, TileH int
}

// Total is everything together.
func (p Plan) Total() int64 { return p.Weights + p.Activations + p.Host }

// PlanFor predicts the memory of upscaling a W×H picture with a network of geometry cfg in the
// tiling t.
func PlanFor(cfg *Config, W, H int, t Tiling) Plan {
	u := max(1, cfg.Unshuffle)
	t = t.align(u)
	pw, ph := (W+u-1)/u*u, (H+u-1)/u*u
	tw, th := t.largest(pw), t.largest(ph)
	m := &Model{cfg: cfg}
	p := &pass{}
	x := &dryTensor{[]int{3, th, tw}}
	p.live = 4 * elements(x.shape)
	p.peak = p.live
	out := m.forward(p, x)
	p.free(out)
	s := int64(cfg.Scale)
	tile := 4 * 3 * s * s * int64(tw*th) * 2 // the download and its crop
	return Plan{
		Weights:     4 * cfg.Params(),
		Activations: p.peak,
		Host:        4*3*int64(pw*ph) + 4*s*s*int64(W*H) + tile,
		TileW:       tw,
		TileH:       th,
	}
}

// ChooseTiling is the tiling whose activations fit in budget bytes (DefaultPad around each tile):
// the whole picture when it fits, else the largest multiple of 16 that does (at least 32).
func ChooseTiling(cfg *Config, W, H int, budget int64) Tiling {
	if PlanFor(cfg, W, H, Tiling{}).Activations <= budget {
		return Tiling{}
	}
	best := 32
	for tile := 48; tile < max(W, H); tile += 16 {
		if PlanFor(cfg, W, H, Tiling{Tile: tile, Pad: DefaultPad}).Activations > budget {
			break
		}
		best = tile
	}
	return Tiling{Tile: best, Pad: DefaultPad}
}

// DefaultBudget is the activation budget ChooseTiling gets unless the caller knows better: 1 GiB,
// a 240² tile of a full-size RRDBNet.
const DefaultBudget = 1 << 30

// largest is the longest padded tile along a side of n pixels.
func (t Tiling) largest(n int) int {
	if t.Tile <= 0 || t.Tile >= n {
		return n
	}
	l := 0
	for _, x := range tileStarts(n, t.Tile) {
		l = max(l, min(n, x+t.Tile+t.Pad)-max(0, x-t.Pad))
	}
	return l
}
