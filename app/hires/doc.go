// Package hires plans the second pass at a higher resolution ("hi-res fix"): a finished image is
// resized with Lanczos (imaging) by ×1.5 or ×2, up to the model's 2048 pixels a side — or, as its
// first stage, upscaled by a learned upscaler (FirstStage, A1111's hr_upscaler) — and run again as
// an image-to-image pass at a low strength with the same prompt, condition images and LoRAs.
// Before it starts, the memory planner says whether the larger size fits, the measured step time
// says how long it should take, and a smaller factor that fits is offered when it does not.
package hires
