package metal

import (
	"errors"
	"math"
	"strings"
	"testing"

	"easel/kernels/device"
)

func TestOverflowedAndWiden(t *testing.T) {
	inf := float32(math.Inf(1))
	got := Overflowed([]float32{1, inf, 40000, float32(math.NaN()), 0.5})
	if len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("Overflowed = %v, want [1 2 3]", got)
	}
	g, moved := DefaultGuards.Widen(got)
	want := DefaultGuards
	want.QKV, want.AO, want.FFN = DefaultGuards.QKV+WidenBits, DefaultGuards.AO+WidenBits, DefaultGuards.FFN+WidenBits
	if !moved || g != want {
		t.Fatalf("Widen = %+v, %v; want %+v", g, moved, want)
	}
	top := Guards{Attn: maxShift, QKV: maxShift, AO: maxShift, FFN: maxShift, Hid: maxShift}
	if _, moved := top.Widen([]int{0, 4}); moved {
		t.Error("guards at the widest moved")
	}
	if Finite([]float32{1, inf}) || !Finite([]float32{1, 2}) {
		t.Error("Finite")
	}
}

// TestRunRecovering: a timeout is retried in shorter buffers until it passes, an out-of-memory is
// retried once after releasing, and what is left becomes a decline with a sentence (or passes
// through when it is not the GPU's).
func TestRunRecovering(t *testing.T) {
	timeout := &device.CommandBufferError{Kind: device.ErrorTimeout, Message: "watchdog"}
	oom := &device.CommandBufferError{Kind: device.ErrorOutOfMemory, Message: "oom"}

	fails, shortened := 2, 0
	retries, err := RunRecovering("denoiser", func() error {
		if fails > 0 {
			fails--
			return timeout
		}
		return nil
	}, Recovery{Shorten: func() (string, bool) { shortened++; return "shorter command buffers", true }})
	if err != nil || shortened != 2 || len(retries) != 2 || !retries[1].OK {
		t.Fatalf("timeout: %v, shortened %d, retries %+v", err, shortened, retries)
	}

	_, err = RunRecovering("denoiser", func() error { return timeout }, Recovery{Shorten: func() (string, bool) { return "", false }})
	var d *Declined
	if !errors.As(err, &d) || !strings.Contains(d.Reason, "watchdog") {
		t.Fatalf("timeout that cannot shorten: %v, want a decline about the watchdog", err)
	}

	runs, released := 0, 0
	_, err = RunRecovering("VAE", func() error { runs++; return oom }, Recovery{Release: func() string { released++; return "" }})
	if !errors.As(err, &d) || runs != 2 || released != 1 || !strings.Contains(d.Reason, "out of memory") {
		t.Fatalf("persistent oom: %v after %d runs, %d releases", err, runs, released)
	}

	plain := errors.New("not the GPU's")
	if _, err := RunRecovering("VAE", func() error { return plain }, Recovery{}); err != plain {
		t.Fatalf("a non-GPU error became %v", err)
	}
	pf := &device.CommandBufferError{Kind: device.ErrorPageFault}
	if _, err := RunRecovering("denoiser", func() error { return pf }, Recovery{}); !errors.Is(err, pf) {
		t.Fatalf("a page fault became %v; the pipeline reports it as the model file's", err)
	}
}
