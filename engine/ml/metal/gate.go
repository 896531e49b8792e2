package metal

import "easel/kernels/device"

// GateDevice is dev for a stage the self-test declined: compiling a library on it returns
// decline, so the stage's Metal constructor declines as it would for a kernel that does not
// compile, the CPU runs the stage, and the pipeline's notice carries decline's sentence.
func GateDevice(dev device.Device, decline error) device.Device {
	if decline == nil {
		return dev
	}
	return gatedDevice{dev, decline}
}

type gatedDevice struct {
	device.Device
	decline error
}

func (g gatedDevice) NewLibrary(string, []byte) (device.Library, error) { return nil, g.decline }
