package condimage

import (
	"fmt"
	"math"
)

// ConditionMultiple is the granularity of condition-image sizes: the VAE's 16× downscale times the
// DiT's 2×2 patch (spec §2, multiple_of = 32).
const ConditionMultiple = 32

// CalculateDimensions is the pipeline's calculate_dimensions(target_area, ratio) (spec §2): the
// width and height of about targetArea pixels with aspect ratio width/height, each rounded to a
// multiple of 32 with Python's round (half to even). The height comes from the unrounded width.
func CalculateDimensions(targetArea, ratio float64) (width, height int) {
	w := math.Sqrt(targetArea * ratio)
	h := w / ratio
	width = int(math.RoundToEven(w/ConditionMultiple)) * ConditionMultiple
	height = int(math.RoundToEven(h/ConditionMultiple)) * ConditionMultiple
	return width, height
}

// ConditionSize is the size (Wc, Hc) a condition image of srcW×srcH pixels is resized to, for an
// output resolution res (the target area is res², spec §3.1 step 2). It refuses sizes that round to
// zero (an extreme aspect ratio or a tiny resolution) instead of handing an empty image onwards.
func ConditionSize(srcW, srcH, res int) (width, height int, err error) {
	if srcW <= 0 || srcH <= 0 {
		return 0, 0, fmt.Errorf("condition image is %d×%d pixels: it must have at least one pixel", srcW, srcH)
	}
	if res <= 0 {
		return 0, 0, fmt.Errorf("output resolution %d is not positive", res)
	}
	area := float64(res) * float64(res)
	width, height = CalculateDimensions(area, float64(srcW)/float64(srcH))
	if width <= 0 || height <= 0 {
		return 0, 0, fmt.Errorf("condition image %d×%d at resolution %d rounds to %d×%d pixels: "+
			"its aspect ratio is too extreme for that resolution; crop it or raise the resolution",
			srcW, srcH, res, width, height)
	}
	return width, height, nil
}

// SmartResize is the Qwen2-VL image processor's smart_resize (spec §3.2): height and width rounded
// (half to even) to multiples of factor, then scaled down to at most maxPixels or up to at least
// minPixels, keeping the aspect ratio. It refuses aspect ratios above 200, as the reference does.
func SmartResize(height, width, factor, minPixels, maxPixels int) (h, w int, err error) {
	if height <= 0 || width <= 0 || factor <= 0 {
		return 0, 0, fmt.Errorf("smart_resize of %d×%d with factor %d: sizes must be positive", width, height, factor)
	}
	if float64(max(height, width))/float64(min(height, width)) > 200 {
		return 0, 0, fmt.Errorf("image %d×%d has an aspect ratio above 200, which the Qwen3-VL "+
			"image processor refuses; crop it", width, height)
	}
	f := float64(factor)
	hBar := int(math.RoundToEven(float64(height)/f)) * factor
	wBar := int(math.RoundToEven(float64(width)/f)) * factor
	switch {
	case hBar*wBar > maxPixels:
		beta := math.Sqrt(float64(height) * float64(width) / float64(maxPixels))
		hBar = max(factor, int(math.Floor(float64(height)/beta/f))*factor)
		wBar = max(factor, int(math.Floor(float64(width)/beta/f))*factor)
	case hBar*wBar < minPixels:
		beta := math.Sqrt(float64(minPixels) / (float64(height) * float64(width)))
		hBar = int(math.Ceil(float64(height)*beta/f)) * factor
		wBar = int(math.Ceil(float64(width)*beta/f)) * factor
	}
	if hBar <= 0 || wBar <= 0 {
		return 0, 0, fmt.Errorf("smart_resize of %d×%d gives %d×%d: raise the processor's minimum "+
			"pixels or use a larger image", width, height, wBar, hBar)
	}
	return hBar, wBar, nil
}
