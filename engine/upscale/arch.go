package upscale

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Arch is a network family.
type Arch string

const (
	RRDBNet         Arch = "RRDBNet"
	SRVGGNetCompact Arch = "SRVGGNetCompact"
)

// Config is a network's geometry, read from its tensors.
type Config struct {
	Arch  Arch
	Scale int // output pixels per input pixel, per side
	// Layout names the file's key layout: "basicsr", "old" (ESRGAN's model.N) or "bsrgan" for
	// RRDBNet, "srvgg" for SRVGGNetCompact.
	Layout   string
	Features int // nf: conv_first's outputs (RRDBNet), body.0's (SRVGGNetCompact)
	// RRDBNet
	Growth    int // gc: conv1's outputs
	Blocks    int // RRDB blocks
	Unshuffle int // 1, 2 or 4: pixel-unshuffle factor before conv_first (3·Unshuffle² inputs)
	Ups       int // nearest ×2 + conv stages
	// SRVGGNetCompact
	Convs int // num_conv: the nf→nf convolutions between the first and the last
}

// String is the one-line description the CLI and the API print ("RRDBNet ×4, 64 features, 23 blocks").
func (c *Config) String() string {
	if c.Arch == SRVGGNetCompact {
		return fmt.Sprintf("SRVGGNetCompact ×%d, %d features, %d convolutions", c.Scale, c.Features, c.Convs)
	}
	blocks := "blocks"
	if c.Blocks == 1 {
		blocks = "block"
	}
	return fmt.Sprintf("RRDBNet ×%d, %d features, %d %s, growth %d", c.Scale, c.Features, c.Blocks, blocks, c.Growth)
}

// Params is the number of weights.
func (c *Config) Params() int64 {
	conv := func(in, out int) int64 { return int64(in*out*9 + out) }
	if c.Arch == SRVGGNetCompact {
		n := conv(3, c.Features) + int64(c.Features)
		n += int64(c.Convs) * (conv(c.Features, c.Features) + int64(c.Features))
		return n + conv(c.Features, 3*c.Scale*c.Scale)
	}
	nf, gc := c.Features, c.Growth
	rdb := conv(nf, gc) + conv(nf+gc, gc) + conv(nf+2*gc, gc) + conv(nf+3*gc, gc) + conv(nf+4*gc, nf)
	n := conv(3*c.Unshuffle*c.Unshuffle, nf) + int64(c.Blocks)*3*rdb + conv(nf, nf)
	n += int64(c.Ups)*conv(nf, nf) + conv(nf, nf) + conv(nf, 3)
	return n
}

var (
	oldBlock   = regexp.MustCompile(`^model\.1\.sub\.(\d+)\.RDB([123])\.conv([1-5])\.0\.(weight|bias)$`)
	oldTrunk   = regexp.MustCompile(`^model\.1\.sub\.(\d+)\.(weight|bias)$`)
	oldTop     = regexp.MustCompile(`^model\.(\d+)\.(weight|bias)$`)
	bsrBlock   = regexp.MustCompile(`^RRDB_trunk\.(\d+)\.RDB([123])\.conv([1-5])\.(weight|bias)$`)
	bsrUp      = regexp.MustCompile(`^upconv(\d+)\.(weight|bias)$`)
	basicBlock = regexp.MustCompile(`^body\.(\d+)\.rdb([123])\.conv([1-5])\.(weight|bias)$`)
	basicUp    = regexp.MustCompile(`^conv_up(\d+)\.(weight|bias)$`)
	srvggBody  = regexp.MustCompile(`^body\.(\d+)\.(weight|bias)$`)
)

// Detect reads the architecture from the tensors and renames them to the canonical (basicsr)
// names the networks bind: conv_first, body.i.rdbk.convj, conv_body, conv_up1…, conv_hr, conv_last
// for RRDBNet; body.N for SRVGGNetCompact. A file of neither family gets a sentence naming the
// keys it found.
func Detect(s State) (*Config, State, error) {
	switch {
	case has(s, "conv_first.weight") && has(s, "body.0.rdb1.conv1.weight"):
		return rrdb(s, "basicsr", func(k string) string { return k })
	case has(s, "model.0.weight") && has(s, "model.1.sub.0.RDB1.conv1.0.weight"):
		return rrdb(s, "old", oldName(s))
	case has(s, "conv_first.weight") && has(s, "RRDB_trunk.0.RDB1.conv1.weight"):
		return rrdb(s, "bsrgan", bsrganName)
	case has(s, "body.0.weight") && !has(s, "conv_first.weight"):
		return srvgg(s)
	}
	return nil, nil, unknown(s)
}

func has(s State, k string) bool { _, ok := s[k]; return ok }

// oldName maps old ESRGAN names: model.0 first, model.1.sub.i blocks and model.1.sub.N the trunk
// conv, then an upsampling conv every third index from model.3, hr and last at +2 and +4 after
// the last one.
func oldName(s State) func(string) string {
	tops := map[int]bool{}
	for k := range s {
		if m := oldTop.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			tops[n] = true
		}
	}
	lastUp := 0
	for i := 3; tops[i]; i += 3 {
		lastUp = i
	}
	return func(k string) string {
		if m := oldBlock.FindStringSubmatch(k); m != nil {
			return fmt.Sprintf("body.%s.rdb%s.conv%s.%s", m[1], m[2], m[3], m[4])
		}
		if m := oldTrunk.FindStringSubmatch(k); m != nil {
			return "conv_body." + m[2]
		}
		if m := oldTop.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			switch {
			case n == 0:
				return "conv_first." + m[2]
			case n >= 3 && n <= lastUp && n%3 == 0:
				return fmt.Sprintf("conv_up%d.%s", n/3, m[2])
			case lastUp > 0 && n == lastUp+2:
				return "conv_hr." + m[2]
			case lastUp > 0 && n == lastUp+4:
				return "conv_last." + m[2]
			}
		}
		return k
	}
}

func bsrganName(k string) string {
	if m := bsrBlock.FindStringSubmatch(k); m != nil {
		return fmt.Sprintf("body.%s.rdb%s.conv%s.%s", m[1], m[2], m[3], m[4])
	}
	if m := bsrUp.FindStringSubmatch(k); m != nil {
		return fmt.Sprintf("conv_up%s.%s", m[1], m[2])
	}
	switch {
	case strings.HasPrefix(k, "trunk_conv."):
		return "conv_body." + strings.TrimPrefix(k, "trunk_conv.")
	case strings.HasPrefix(k, "HRconv."):
		return "conv_hr." + strings.TrimPrefix(k, "HRconv.")
	}
	return k
}

func rrdb(s State, layout string, rename func(string) string) (*Config, State, error) {
	out := State{}
	for k, v := range s {
		if strings.Contains(k, "conv1x1") {
			return nil, nil, fmt.Errorf("this is an ESRGAN+ network (it has %s), which Easel does not run; use an ESRGAN, Real-ESRGAN or SRVGGNetCompact file", k)
		}
		out[rename(k)] = v
	}
	c := &Config{Arch: RRDBNet, Layout: layout}
	first, ok := out["conv_first.weight"]
	if !ok || len(first.shape) != 4 {
		return nil, nil, fmt.Errorf("an RRDBNet (%s layout) without a 4-D first convolution", layout)
	}
	c.Features = first.shape[0]
	switch first.shape[1] {
	case 3:
		c.Unshuffle = 1
	case 12:
		c.Unshuffle = 2
	case 48:
		c.Unshuffle = 4
	default:
		return nil, nil, fmt.Errorf("an RRDBNet whose first convolution takes %d channels; Easel runs 3 (RGB), 12 (×2) and 48 (×1)", first.shape[1])
	}
	if g, ok := out["body.0.rdb1.conv1.weight"]; ok && len(g.shape) == 4 {
		c.Growth = g.shape[0]
	}
	for k := range out {
		if m := basicBlock.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			c.Blocks = max(c.Blocks, n+1)
		}
		if m := basicUp.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			c.Ups = max(c.Ups, n)
		}
	}
	if c.Ups == 0 {
		return nil, nil, fmt.Errorf("an RRDBNet (%s layout) without upsampling convolutions", layout)
	}
	up := 1 << c.Ups
	if up%c.Unshuffle != 0 {
		return nil, nil, fmt.Errorf("an RRDBNet with %d upsampling stages after a pixel-unshuffle of %d", c.Ups, c.Unshuffle)
	}
	c.Scale = up / c.Unshuffle
	return c, out, checkRRDB(c, out)
}

// checkRRDB checks that every tensor the network binds is there with its shape.
func checkRRDB(c *Config, s State) error {
	nf, gc := c.Features, c.Growth
	need := map[string][]int{"conv_first": {nf, 3 * c.Unshuffle * c.Unshuffle}, "conv_body": {nf, nf}, "conv_hr": {nf, nf}, "conv_last": {3, nf}}
	for u := 1; u <= c.Ups; u++ {
		need[fmt.Sprintf("conv_up%d", u)] = []int{nf, nf}
	}
	for b := 0; b < c.Blocks; b++ {
		for r := 1; r <= 3; r++ {
			for j := 1; j <= 5; j++ {
				out := gc
				if j == 5 {
					out = nf
				}
				need[fmt.Sprintf("body.%d.rdb%d.conv%d", b, r, j)] = []int{out, nf + (j-1)*gc}
			}
		}
	}
	return checkConvs(s, need)
}

func checkConvs(s State, need map[string][]int) error {
	names := make([]string, 0, len(need))
	for n := range need {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		io := need[n]
		w, ok := s[n+".weight"]
		if !ok {
			return fmt.Errorf("the file has no %s.weight: it is incomplete or not an upscaler of this family", n)
		}
		if len(w.shape) != 4 || w.shape[0] != io[0] || w.shape[1] != io[1] || w.shape[2] != 3 || w.shape[3] != 3 {
			return fmt.Errorf("%s.weight has shape %v, want [%d %d 3 3]", n, w.shape, io[0], io[1])
		}
		b, ok := s[n+".bias"]
		if !ok || len(b.data) != io[0] {
			return fmt.Errorf("%s.bias is missing or not %d values", n, io[0])
		}
	}
	return nil
}

func srvgg(s State) (*Config, State, error) {
	last := -1
	for k := range s {
		if m := srvggBody.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			last = max(last, n)
		} else {
			return nil, nil, unknown(s)
		}
	}
	first := s["body.0.weight"]
	if len(first.shape) != 4 || first.shape[1] != 3 {
		return nil, nil, unknown(s)
	}
	c := &Config{Arch: SRVGGNetCompact, Layout: "srvgg", Features: first.shape[0]}
	// body.0 conv, body.1 activation, then (conv, activation) per num_conv, then the last conv.
	if last < 2 || last%2 != 0 {
		return nil, nil, fmt.Errorf("an SRVGGNetCompact whose last layer is body.%d; the published files end on an even index", last)
	}
	c.Convs = (last - 2) / 2
	for i := 1; i < last; i += 2 {
		a, ok := s[fmt.Sprintf("body.%d.weight", i)]
		if !ok {
			return nil, nil, fmt.Errorf("an SRVGGNetCompact without activation weights at body.%d: its activation (ReLU or LeakyReLU) cannot be told from the file, so Easel does not run it; use a file with PReLU (the published realesr-general and animevideo files)", i)
		}
		if len(a.shape) != 1 || a.shape[0] != c.Features {
			return nil, nil, fmt.Errorf("body.%d.weight has shape %v, want a PReLU's [%d]", i, a.shape, c.Features)
		}
	}
	lw := s[fmt.Sprintf("body.%d.weight", last)]
	if len(lw.shape) != 4 {
		return nil, nil, fmt.Errorf("body.%d.weight has shape %v, want a convolution", last, lw.shape)
	}
	out := lw.shape[0]
	for sc := 1; sc <= 8; sc++ {
		if 3*sc*sc == out {
			c.Scale = sc
		}
	}
	if c.Scale == 0 {
		return nil, nil, fmt.Errorf("an SRVGGNetCompact whose last convolution has %d outputs; want 3·scale²", out)
	}
	need := map[string][]int{}
	for i := 0; i <= last; i += 2 {
		io := []int{c.Features, c.Features}
		switch i {
		case 0:
			io[1] = 3
		case last:
			io[0] = out
		}
		need[fmt.Sprintf("body.%d", i)] = io
	}
	return c, s, checkConvs(s, need)
}

// unknown is the sentence for a file of neither family: it names a few of its keys.
func unknown(s State) error {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > 4 {
		keys = keys[:4]
	}
	return fmt.Errorf("not an upscaler Easel runs: its tensors (%s, …) are neither an RRDBNet (ESRGAN, Real-ESRGAN, BSRGAN, 4x-UltraSharp, NMKD Superscale) nor an SRVGGNetCompact (realesr-general, realesr-animevideo)", strings.Join(keys, ", "))
}
