package ml

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Class is the timing class of an op: what a per-class time report groups it under.
type Class int

// The timing classes of docs/ARCHITECTURE.md §3.
const (
	ClassGemm Class = iota // quantized linear layers
	ClassAttn              // attention (scores, softmax, weighted sum)
	ClassNorm              // RMSNorm, LayerNorm, the gated residual + modulated LayerNorm row op
	ClassRope              // per-head norm + rotary embedding
	ClassAct               // SiLU, GELU-tanh, SwiGLU, element-wise arithmetic
	ClassConv              // conv2d and upsampling
	ClassCopy              // uploads, downloads, row copies, transposes
	NumClasses
)

var classNames = [NumClasses]string{"gemm", "attn", "norm", "rope", "act", "conv", "copy"}

// String is the class's short name as reports print it.
func (c Class) String() string {
	if c >= 0 && c < NumClasses {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// ClassTime is the accumulated cost of one class: wall (CPU) or GPU time, the number of ops, and
// the floating-point operations those ops performed when the backend counts them (GEMM, attention).
type ClassTime struct {
	Time  time.Duration
	Ops   int
	Flops float64
}

// Timings accumulates time per class. It is safe for concurrent use; the zero value is ready.
type Timings struct {
	mu sync.Mutex
	by [NumClasses]ClassTime
}

// Add records one op of class c that took d and performed flops floating-point operations.
func (t *Timings) Add(c Class, d time.Duration, flops float64) {
	if c < 0 || c >= NumClasses {
		return
	}
	t.mu.Lock()
	t.by[c].Time += d
	t.by[c].Ops++
	t.by[c].Flops += flops
	t.mu.Unlock()
}

// Snapshot returns the totals so far, indexed by Class.
func (t *Timings) Snapshot() [NumClasses]ClassTime {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.by
}

// Reset zeroes every class.
func (t *Timings) Reset() {
	t.mu.Lock()
	t.by = [NumClasses]ClassTime{}
	t.mu.Unlock()
}

// Total is the time summed over all classes.
func (t *Timings) Total() time.Duration {
	var sum time.Duration
	for _, c := range t.Snapshot() {
		sum += c.Time
	}
	return sum
}

// String prints the non-empty classes, e.g. "gemm 812ms (12 ops, 95.1 GFLOP/s) · attn 20ms".
func (t *Timings) String() string {
	var parts []string
	for c, ct := range t.Snapshot() {
		if ct.Ops == 0 {
			continue
		}
		s := fmt.Sprintf("%s %v (%d ops", Class(c), ct.Time.Round(time.Microsecond), ct.Ops)
		if ct.Flops > 0 && ct.Time > 0 {
			s += fmt.Sprintf(", %.1f GFLOP/s", ct.Flops/ct.Time.Seconds()/1e9)
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, " · ")
}
