package fastdraft

import (
	"strings"

	"easel/engine/lora"
)

// Published is a few-step LoRA published on the Hugging Face hub.
type Published struct {
	// Name is how the window names it ("Lightning 4-step").
	Name string
	// Repo ("owner/name") and File (its path in the repository) say where it is.
	Repo, File string
	// SaveAs is the file name it gets in the LoRA folder (the name images record).
	SaveAs string
	// SizeHint is the size its model card states ("" when none does); the hub's listing is what
	// the window shows once asked.
	SizeHint string
	// Preset is the sampling its card documents.
	Preset lora.Preset
	// Note says what could not be confirmed about it.
	Note string
}

// Catalogue is the published few-step LoRAs Easel offers, the recommended one first. Their
// names, files and presets are those of the publishers' model cards; none of the files has been
// opened here, so their sizes and hashes come from the hub at download time.
var Catalogue = []Published{
	{
		Name: "Lightning 4-step", Repo: "lightx2v/Qwen-Image-2.1-Lightning", File: "pytorch_lora_weights.safetensors",
		SaveAs: "Qwen-Image-2.1-Lightning-4step.safetensors",
		Preset: lora.Preset{Name: "Lightning 4-step", Steps: 4, CFG: 1, Schedule: "lightning"},
		Note:   "its card asks for its training schedule (dynamic exponential shift, no terminal stretch); its exact shift values and CFG are not published",
	},
	{
		Name: "Turbo 8-step (153 MB)", Repo: "nynxz/Qwen-Image-2.1", File: "loras/qwen_image_2.1_turbo_lora_fro_153mb_bf16.safetensors",
		SaveAs: "Qwen-Image-2.1-Turbo-8step-153MB.safetensors", SizeHint: "153 MB",
		Preset: lora.Preset{Name: "Turbo 8-step", Steps: 8, CFG: 1, Schedule: "default"},
		Note:   "its card samples with Euler on the model's own schedule at 8 steps, CFG 1",
	},
	{
		Name: "Viggle Turbo 4-step (r64)", Repo: "Viggle/Qwen-Image-2.1-viggle-turbo", File: "Qwen-Image-2.1-viggle-turbo-4step-lora-r64.safetensors",
		SaveAs: "Qwen-Image-2.1-viggle-turbo-4step.safetensors", SizeHint: "340 MB",
		Preset: lora.Preset{Name: "Viggle Turbo 4-step", Steps: 4, CFG: 1, Schedule: "default"},
		Note:   "its card says 4 steps without guidance; its schedule is not published",
	},
}

// Find is the catalogue entry whose Name or SaveAs is name (case-insensitive), or nil.
func Find(name string) *Published {
	for i := range Catalogue {
		if strings.EqualFold(Catalogue[i].Name, name) || strings.EqualFold(Catalogue[i].SaveAs, name) {
			return &Catalogue[i]
		}
	}
	return nil
}
