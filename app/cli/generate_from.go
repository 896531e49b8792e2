package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"easel/app/imagefile"
	"easel/app/loralib"
	"easel/app/settings"
)

// applyFrom fills every setting not given on the command line from the settings embedded in the
// --from image, and finds its condition images in the same folder, checking their SHA-256.
func applyFrom(g *generateArgs, out *generateOutput) *failure {
	m, err := imagefile.ReadFile(g.from)
	if err != nil {
		return fail(ExitImage, "--from %s: %v", g.from, err)
	}
	s := m.Settings
	if s == nil {
		return fail(ExitImage, "--from %s: the image holds no Easel settings (it was not made by Easel, or its metadata was stripped)", g.from)
	}
	if !g.set["prompt"] {
		g.prompt = s.Prompt
	}
	if !g.set["negative"] {
		g.negative = s.NegativePrompt
	}
	if !g.set["size"] && !g.set["aspect"] {
		g.size = fmt.Sprintf("%dx%d", s.Width, s.Height)
	}
	if !g.set["resolution"] {
		g.resolution = s.Resolution
	}
	if !g.set["steps"] {
		g.steps = s.Steps
	}
	if !g.set["cfg"] {
		g.cfg = s.CFG
	}
	if !g.set["seed"] {
		g.seed = strconv.FormatUint(s.Seed, 10)
		if s.NoiseSeed != nil && !g.set["noise-seed"] {
			g.noiseSeed = strconv.FormatUint(*s.NoiseSeed, 10)
		}
	}
	if !g.set["image"] {
		dir := filepath.Dir(g.from)
		for i, ref := range s.Images {
			path := filepath.Join(dir, ref.Name)
			data, err := os.ReadFile(path)
			if err != nil {
				return fail(ExitImage, "--from %s needs condition image %d, %s (sha256 %s), which is not beside it: pass the images with --image, in order", g.from, i+1, ref.Name, ref.SHA256)
			}
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != ref.SHA256 {
				return fail(ExitImage, "--from %s: %s is not the condition image it was made with (its SHA-256 differs): pass the original with --image", g.from, path)
			}
			g.images = append(g.images, path)
		}
	}
	if !g.set["lora"] && len(s.LoRAs) > 0 {
		dirs := []string{filepath.Dir(g.from)}
		if d, err := settings.LoRADir(); err == nil {
			dirs = append(dirs, d)
		}
		found, missing := loralib.Find(s.LoRAs, nil, dirs)
		if len(missing) > 0 {
			return fail(ExitLoRA, "--from %s: %s (or pass them with --lora)", g.from, loralib.MissingSentence(missing, dirs))
		}
		for i, path := range found {
			g.loras = append(g.loras, path+":"+strconv.FormatFloat(s.LoRAs[i].Strength, 'g', -1, 64))
		}
	}
	if s.Init != nil {
		g.fromSettings = s // its start image and mask, unless --init gives another
		if !g.set["size"] && !g.set["aspect"] && s.Init.Fit == "" {
			g.size = "" // the size follows the start image again
		}
	}
	g.fromModelHash = s.ModelHash
	return nil
}
