package serve

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"easel/app/compose"
	"easel/app/settings"
)

// loraTag is A1111's extra-network syntax: <lora:NAME>, <lora:NAME:WEIGHT>, or
// <lora:NAME:TE_WEIGHT:UNET_WEIGHT> (Easel's LoRAs have one strength: the first weight).
var loraTag = regexp.MustCompile(`<lora:([^:>]+)(?::([^:>]*))?(?::[^>]*)?>`)

// loraExts are the LoRA file types the folder is searched for.
var loraExts = []string{".safetensors"}

// loraFiles lists the LoRA folder: name (the file's stem) → file name.
func loraFiles(dir string) map[string]string {
	out := map[string]string{}
	if dir == "" {
		return out
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		for _, ext := range loraExts {
			if strings.EqualFold(filepath.Ext(e.Name()), ext) {
				out[strings.TrimSuffix(e.Name(), filepath.Ext(e.Name()))] = e.Name()
			}
		}
	}
	return out
}

// loraNames is the folder's LoRA names, sorted.
func loraNames(dir string) []string {
	files := loraFiles(dir)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// takeLoRAs removes the <lora:…> tags from a prompt and finds each name among the LoRA folder's
// files, by comparison with the listed names (a name is never made into a path). A name not found
// is a warning, as A1111 skips it; a weight that is not a number or outside the app's range is a
// 422 on the prompt.
func takeLoRAs(f *fields, field, prompt, dir string) (string, []compose.LoRA, []string) {
	matches := loraTag.FindAllStringSubmatch(prompt, -1)
	if len(matches) == 0 {
		return prompt, nil, nil
	}
	files := loraFiles(dir)
	var loras []compose.LoRA
	var warnings []string
	for _, m := range matches {
		name, weight := strings.TrimSpace(m[1]), 1.0
		if w := strings.TrimSpace(m[2]); w != "" {
			v, err := strconv.ParseFloat(w, 64)
			if err != nil {
				f.Invalid(field, fmt.Sprintf("<lora:%s:%s>: the weight is not a number", name, m[2]))
				continue
			}
			weight = v
		}
		if weight < settings.MinLoRAStrength || weight > settings.MaxLoRAStrength {
			f.Invalid(field, fmt.Sprintf("<lora:%s:%g>: choose a weight from %g to %g", name, weight, float64(settings.MinLoRAStrength), float64(settings.MaxLoRAStrength)))
			continue
		}
		file, ok := files[name]
		if !ok {
			warnings = append(warnings, fmt.Sprintf("LoRA %q is not in this server's LoRA folder (/sdapi/v1/loras lists them); it was not applied", name))
			continue
		}
		loras = append(loras, compose.LoRA{Path: filepath.Join(dir, file), Enabled: true, Strength: weight})
	}
	prompt = strings.TrimSpace(loraTag.ReplaceAllString(prompt, ""))
	return prompt, loras, warnings
}
