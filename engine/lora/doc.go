// Package lora reads LoRA and patch files for the Qwen-Image-2.1 transformer (docs/reference/lora.md):
// diffusers/PEFT (lora_A/lora_B), kohya and ComfyUI (lora_down/lora_up, the lora_unet_ flattened
// names, the diffusion_model. prefix, the fused img_mlp.gate_up), and full or bias patches
// (.diff, .diff_b). Every key is mapped to one of the model's linear layers by name, with its
// own rank and scale (alpha / rank; no alpha means scale 1); files that match no layer, or only
// some, are refused or reported with the counts. Nothing here merges weights: the denoiser adds
// each layer's strength·scale·B(A·x) at run time (engine/qi21).
package lora
