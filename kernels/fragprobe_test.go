package kernels_test

import (
	"strconv"
	"strings"
	"testing"

	"easel/kernels"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// ownerLanes is the owner lane of each element of an 8x8 fragment, row-major, as published by
// metal-flash-attention, MLX steel and tinygrad (docs/reference/msl-emu.md §2). Lane l holds the two
// horizontally adjacent elements (r, c) and (r, c+1) with c even.
const ownerLanes = `
 0  0  1  1  8  8  9  9
 2  2  3  3 10 10 11 11
 4  4  5  5 12 12 13 13
 6  6  7  7 14 14 15 15
16 16 17 17 24 24 25 25
18 18 19 19 26 26 27 27
20 20 21 21 28 28 29 29
22 22 23 23 30 30 31 31`

func parseOwnerLanes(t *testing.T) [64]int {
	var owner [64]int
	fields := strings.Fields(ownerLanes)
	if len(fields) != 64 {
		t.Fatalf("layout table has %d entries, want 64", len(fields))
	}
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		owner[i] = n
	}
	return owner
}

func TestEmuFragProbeMatchesPublishedLayout(t *testing.T) {
	owner := parseOwnerLanes(t)
	for _, order := range []emu.FiberOrder{emu.Forward, emu.Shuffled} {
		d := newDevice(t, order)
		p := pipeline(t, d, "fragprobe.metal", "qi_fragprobe")
		out := newBuffer(t, d, kernels.FragProbeLen*4)
		groups, threads := kernels.FragProbeGrid()
		run(t, d, p, groups, threads,
			binding{index: 0, buf: out})
		v := device.View[float32](out)

		// Load: lane l's two elements are the table's entries owned by l, left then right.
		for l := 0; l < 32; l++ {
			var want []int
			for i, o := range owner {
				if o == l {
					want = append(want, i)
				}
			}
			got := []int{int(v[4*l]), int(v[4*l+1])}
			if len(want) != 2 || got[0] != want[0] || got[1] != want[1] {
				t.Errorf("order %d: lane %d loaded elements %v, the published layout gives %v", order, l, got, want)
			}
			// The probe's own check, the one the backend runs on the GPU before trusting it.
			if v[4*l] != v[4*l+2] || v[4*l+1] != v[4*l+3] {
				t.Errorf("order %d: lane %d: probe check fails: held %v, assumed %v", order, l, v[4*l:4*l+2], v[4*l+2:4*l+4])
			}
		}
		if err := kernels.CheckFragLayout(v); err != nil {
			t.Errorf("order %d: %v", order, err)
		}
		// Store: element i came from lane owner[i], left or right element by column parity.
		for i := 0; i < 64; i++ {
			want := 2*owner[i] + i%2
			if got := int(v[128+i]); got != want {
				t.Errorf("order %d: store wrote %d to element (%d,%d), the published layout gives %d", order, got, i/8, i%8, want)
			}
		}
	}
}

func TestCheckFragLayoutRejectsAnotherLayout(t *testing.T) {
	owner := parseOwnerLanes(t)
	good := make([]float32, kernels.FragProbeLen)
	for l := 0; l < 32; l++ {
		var mine []int
		for i, o := range owner {
			if o == l {
				mine = append(mine, i)
			}
		}
		for e := 0; e < 2; e++ {
			good[4*l+e], good[4*l+2+e] = float32(mine[e]), float32(mine[e])
		}
	}
	for i, o := range owner {
		good[128+i] = float32(2*o + i%2)
	}
	if err := kernels.CheckFragLayout(good); err != nil {
		t.Fatalf("the published layout is rejected: %v", err)
	}
	// A device whose lanes hold column pairs transposed (lanes 1 and 2 swapped).
	bad := append([]float32(nil), good...)
	copy(bad[4:8], good[8:12])
	copy(bad[8:12], good[4:8])
	if err := kernels.CheckFragLayout(bad); err == nil {
		t.Error("a load layout with lanes 1 and 2 swapped passes the check")
	}
	bad = append([]float32(nil), good...)
	bad[128], bad[129] = bad[129], bad[128]
	if err := kernels.CheckFragLayout(bad); err == nil {
		t.Error("a store layout with elements swapped passes the check")
	}
}
