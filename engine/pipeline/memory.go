package pipeline

import (
	"runtime"
	"strings"

	"easel/engine/cmf"
	"easel/engine/qi21"
)

// Memory is the ledger a run reports: where the bytes go.
type Memory struct {
	// Weights are the bytes each network maps from the model file (read in place, not copied).
	Weights []ComponentBytes
	// PrefixKV is each live program's cached prefix keys and values, in bytes (positive prompt
	// first; two under CFG), at the element size where the program lives (half on the CPU and
	// on the Metal device; float32 for a CPU model with qi21.Model.FloatKV).
	PrefixKV []int64
	// Activations estimates the denoiser's working set from the shapes, not a measurement: on the
	// CPU the largest float32 activations of a prefill or a step (programs share them); on a
	// Metal device the activation buffers each program owns there, summed.
	Activations int64
	// PeakRSS is the process's peak resident set as the OS reports it (0 where unknown).
	PeakRSS int64
	// GoHeap is the Go heap in use now.
	GoHeap int64
	// DeviceBudget is what the denoiser may use: the Metal device's recommended working set when
	// it runs there, physical memory on the CPU backend, or what a device backend reports
	// through DeviceBudget() int64.
	DeviceBudget int64
}

// WeightBytes is the sum of Weights.
func (m Memory) WeightBytes() int64 {
	var n int64
	for _, c := range m.Weights {
		n += c.Bytes
	}
	return n
}

// prefixKVBytes is one program's cache: every layer's K and V for the prefix rows (spec §6.11:
// prefix_len × layers × 2 × hidden), at elem bytes a value.
func prefixKVBytes(c qi21.Config, lay *qi21.Layout, elem int) int64 {
	return int64(lay.PrefixLen) * int64(c.Layers) * 2 * int64(c.Hidden()) * int64(elem)
}

// backendReports are what a backend may report about its memory: the size of a cached value and
// the memory it may use.
type (
	kvElementer interface{ KVElementBytes() int }
	budgeter    interface{ DeviceBudget() int64 }
)

// kvElementBytes is the size of one cached value of a new program: what the denoiser reports
// (2 for the CPU model's and the Metal denoiser's half caches), else what the backend reports
// through KVElementBytes() int, else 4 (float32).
func (p *Pipeline) kvElementBytes() int {
	if n := p.den.KVElementBytes(); n > 0 {
		return n
	}
	if k, ok := p.inner.(kvElementer); ok && k.KVElementBytes() > 0 {
		return k.KVElementBytes()
	}
	return 4
}

// programKVElementBytes is one live program's element size: its own report (a program the
// device declined lives in the CPU model's cache), else the denoiser's.
func (p *Pipeline) programKVElementBytes(prog Program) int {
	if n := prog.KVElementBytes(); n > 0 {
		return n
	}
	return p.kvElementBytes()
}

// attentionScoreBudget is the CPU backend's score scratch per attention call (engine/ml/cpu).
const attentionScoreBudget = 16 << 20

// activationBytes estimates one block's float32 working set over n rows: the residual stream,
// the normalized input, q, k, v and the attention output (6 rows of hidden), the SwiGLU gate and
// up projections (2 rows of the MLP width), plus the attention score scratch.
func activationBytes(c qi21.Config, n int) int64 {
	return int64(n)*int64(6*c.Hidden()+2*c.MLPHidden())*4 + attentionScoreBudget
}

// ledgerEntry is one program in the ledger: its layout, the size of a cached value, and the
// activation bytes it holds on a device (0: it shares the CPU's activations).
type ledgerEntry struct {
	lay        *qi21.Layout
	elem       int
	deviceActs int64
}

// ledger fills a Memory for programs of these layouts (planned: where the denoiser puts new
// programs).
func (p *Pipeline) ledger(layouts ...*qi21.Layout) Memory {
	entries := make([]ledgerEntry, len(layouts))
	for i, lay := range layouts {
		entries[i] = ledgerEntry{lay: lay, elem: p.kvElementBytes()}
		if lay != nil {
			entries[i].deviceActs = p.den.ActivationBytes(lay.PrefixLen, lay.T)
		}
	}
	return p.ledgerOf(entries)
}

// liveLedger fills a Memory for the programs alive now, each where it lives.
func (p *Pipeline) liveLedger(progs []Program) Memory {
	entries := make([]ledgerEntry, len(progs))
	for i, prog := range progs {
		lay := prog.Layout()
		entries[i] = ledgerEntry{lay: lay, elem: p.programKVElementBytes(prog)}
		if lay != nil {
			entries[i].deviceActs = prog.ActivationBytes(lay.PrefixLen, lay.T)
		}
	}
	return p.ledgerOf(entries)
}

// ledgerOf fills a Memory for these programs.
func (p *Pipeline) ledgerOf(entries []ledgerEntry) Memory {
	m := Memory{Weights: p.weights, DeviceBudget: p.deviceBudget()}
	if n := p.dit.LoRABytes(); n > 0 {
		m.Weights = append(append([]ComponentBytes(nil), p.weights...), ComponentBytes{"lora", n})
	}
	var shared, device int64
	for _, e := range entries {
		if e.lay == nil {
			continue
		}
		m.PrefixKV = append(m.PrefixKV, prefixKVBytes(p.dit.Config, e.lay, e.elem))
		if e.deviceActs > 0 {
			device += e.deviceActs
		} else {
			shared = max(shared, activationBytes(p.dit.Config, max(e.lay.PrefixLen, e.lay.T)))
		}
	}
	m.Activations = shared + device
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.GoHeap = int64(ms.HeapInuse)
	m.PeakRSS = peakRSS()
	return m
}

// deviceBudget is the denoiser's: its placement's (the Metal device's recommended working set),
// else the backend's budget.
func (p *Pipeline) deviceBudget() int64 {
	if p.denAt.Budget > 0 {
		return p.denAt.Budget
	}
	return p.backendBudget()
}

// backendBudget is the backend's (the text encoder and the VAE run there): what it reports,
// else physical memory.
func (p *Pipeline) backendBudget() int64 {
	if d, ok := p.inner.(budgeter); ok {
		return d.DeviceBudget()
	}
	return physicalMemory()
}

// ComponentBytes is how many weight bytes one network maps from the model file.
type ComponentBytes struct {
	Name  string // "dit", "te", "vis", "vae", "other", or "lora" (the LoRAs' factors, held in memory)
	Bytes int64
}

// weightsByComponent sums the directory's payloads by name prefix, in a fixed order.
func weightsByComponent(entries []cmf.Entry) []ComponentBytes {
	order := []string{"dit", "te", "vis", "vae", "other"}
	sums := map[string]int64{}
	for _, e := range entries {
		name, _, _ := strings.Cut(e.Name, ".")
		switch name {
		case "dit", "te", "vis", "vae":
		default:
			name = "other"
		}
		sums[name] += int64(e.Size)
	}
	var out []ComponentBytes
	for _, n := range order {
		if sums[n] > 0 {
			out = append(out, ComponentBytes{n, sums[n]})
		}
	}
	return out
}
