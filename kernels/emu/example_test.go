//go:build linux && amd64 && cgo

package emu_test

import (
	"fmt"
	"log"

	"easel/kernels"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// The backend encodes against device.Device; in tests it gets the emulated one.
func ExampleNewDevice() {
	dev, err := emu.NewDevice(emu.Options{})
	if err != nil {
		log.Fatal(err) // tests skip when errors.Is(err, emu.ErrNoCompiler)
	}
	src, _ := kernels.Source("swiglu.metal")
	lib, err := dev.NewLibrary("swiglu.metal", src)
	if err != nil {
		log.Fatal(err)
	}
	swiglu, _ := dev.Pipeline(lib, "qi_swiglu")

	gu, _ := dev.NewBuffer(8 * 4) // gate[4] | up[4], float
	copy(device.View[float32](gu), []float32{0, 1, 2, -1, 1, 1, 1, 1})
	h, _ := dev.NewBuffer(4 * 2) // half out
	defer gu.Release()
	defer h.Release()
	prm := kernels.SwigluParams{N4: 1, UOff: 4, OScale: 1}

	cb, _ := dev.NewCommandBuffer()
	enc := cb.ComputeEncoder()
	enc.SetPipeline(swiglu)
	enc.SetBuffer(gu, 0, 0)
	enc.SetBuffer(h, 0, 1)
	enc.SetBytes(device.StructBytes(&prm), 2)
	enc.Dispatch(kernels.SwigluGrid(int(prm.N4)))
	enc.End()
	cb.Commit()
	if err := cb.Wait(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%#04x\n", device.View[uint16](h)) // SiLU(0, 1, 2, -1) as half bits
}
