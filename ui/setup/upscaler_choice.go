package setup

import (
	"easel/app/upscalers"
	"easel/ui/upscale"
)

// newUpscalerChoice is the settings dialog's Upscaler field over the upscalers folder in Easel's
// data folder (Lanczos alone when that folder cannot be found).
func newUpscalerChoice(current string) *upscale.Choice {
	lib, err := upscalers.Default()
	if err != nil {
		lib = nil
	}
	return upscale.NewChoice(lib, current)
}
