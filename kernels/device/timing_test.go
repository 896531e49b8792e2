package device

import (
	"testing"
	"time"
)

func TestScaleTicks(t *testing.T) {
	got, ok := ScaleTicks([][2]uint64{{100, 150}, {160, 300}}, 400*time.Nanosecond, ^uint64(0))
	if !ok || got[0] != 100*time.Nanosecond || got[1] != 280*time.Nanosecond {
		t.Errorf("ScaleTicks = %v, %v; want [100ns 280ns] (200 ticks span 400 ns)", got, ok)
	}
	if _, ok := ScaleTicks([][2]uint64{{100, ^uint64(0)}}, time.Second, ^uint64(0)); ok {
		t.Error("an error sample was accepted")
	}
	if _, ok := ScaleTicks([][2]uint64{{100, 50}}, time.Second, ^uint64(0)); ok {
		t.Error("an end before its start was accepted")
	}
}
