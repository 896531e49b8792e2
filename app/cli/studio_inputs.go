package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"easel/app/studio"
)

// A studio job names files by content only. Every file a job's generate flags take (--image,
// --init, --mask, --lora) must be a studioInputRef to the hub's inputs bucket, and the job may
// use only the flags of one image's settings (studioJobFlags): no --out, --from, --checkpoint,
// --render-on or any other flag that reads or writes a file or reaches another machine. A job
// that breaks a rule is refused before anything is fetched, written or opened; the files it
// does name are written under the job's own folder under fixed names (image-1.png, init.png,
// mask.png, lora-1/NAME), checked against their digest first.

// studioJobFlags are the generate flags a studio job may carry ("model" is the worker's own,
// appended last).
var studioJobFlags = map[string]bool{
	"prompt": true, "negative": true, "image": true, "lora": true, "lora-preset": true, "size": true, "aspect": true,
	"resolution": true, "steps": true, "cfg": true, "seed": true, "init": true, "strength": true, "mask": true,
	"mask-blur": true, "mask-grow": true, "mask-crop": true, "keep-original": true, "extend": true,
	"variation-seed": true, "variation-strength": true, "hires": true, "hires-strength": true, "hires-steps": true,
	"noise-seed": true, "model": true,
}

// studioInputRefRE is a file argument of a job: the input's name, then the original file's base
// name (kept for the PNG's record of a LoRA), then a LoRA's strength after a NUL.
var studioInputRefRE = regexp.MustCompile(`^` + studioInputRef + `(sha256-[0-9a-f]{64})\|([^/\\\x00]{0,255})(?:\x00([0-9.eE+-]{1,32}))?$`)

// safeFileNameRE is a base name a worker may write (a LoRA's, under its own folder).
var safeFileNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._()+-]{0,127}$`)

// studioFileRef is one parsed file argument.
type studioFileRef struct {
	input, name, strength string
}

func parseStudioFileRef(flag, v string) (studioFileRef, error) {
	m := studioInputRefRE.FindStringSubmatch(v)
	if m == nil {
		return studioFileRef{}, fmt.Errorf("--%s %q is not a file sent through the hub (a job names its files by content, never by path): the job is refused", flag, shortArg(v))
	}
	return studioFileRef{input: m[1], name: m[2], strength: m[3]}, nil
}

func shortArg(s string) string {
	s = strings.ReplaceAll(s, "\x00", ":")
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// checkStudioJobArgs parses a job's flags (with the worker's --model last) and refuses any flag a
// job may not carry, or a file argument that is not a content reference. Nothing is read or
// written.
func checkStudioJobArgs(args []string, model string) (*generateArgs, error) {
	g, err := parseGenerateArgs(append(append([]string{}, args...), "--model", model))
	if err != nil {
		return nil, fmt.Errorf("the job's settings: %v", err)
	}
	var bad []string
	for name := range g.set {
		if !studioJobFlags[name] {
			bad = append(bad, "--"+name)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, fmt.Errorf("a studio job may not carry %s (only one image's settings): the job is refused", strings.Join(bad, ", "))
	}
	check := func(flag, v string) error {
		if v == "" {
			return nil
		}
		_, err := parseStudioFileRef(flag, v)
		return err
	}
	for _, v := range g.images {
		if err := check("image", v); err != nil {
			return nil, err
		}
	}
	for _, v := range g.loras {
		if err := check("lora", v); err != nil {
			return nil, err
		}
	}
	if err := check("init", g.start.init); err != nil {
		return nil, err
	}
	if err := check("mask", g.start.mask); err != nil {
		return nil, err
	}
	return g, nil
}

// fetchStudioFiles fetches the job's files (checked against their digests) into dir under fixed
// names and points g's file arguments at them.
func fetchStudioFiles(ctx context.Context, g *generateArgs, inputs studio.Inputs, dir string) error {
	write := func(flag, v, name string) (string, error) {
		ref, err := parseStudioFileRef(flag, v)
		if err != nil {
			return "", err
		}
		data, err := inputs(ctx, ref.input)
		if err != nil {
			return "", err
		}
		path := filepath.Join(dir, name)
		if flag == "lora" {
			// the LoRA's own base name is kept (the PNG records it), in a folder of its own
			base := ref.name
			if !safeFileNameRE.MatchString(base) {
				base = "lora.safetensors"
			}
			if err := os.Mkdir(path, 0o700); err != nil {
				return "", err
			}
			path = filepath.Join(path, base)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return "", fmt.Errorf("writing the job's --%s: %v", flag, err)
		}
		if ref.strength != "" {
			path += ":" + ref.strength
		}
		return path, nil
	}
	var err error
	for i, v := range g.images {
		if g.images[i], err = write("image", v, fmt.Sprintf("image-%d%s", i+1, imageExt(v))); err != nil {
			return err
		}
	}
	for i, v := range g.loras {
		if g.loras[i], err = write("lora", v, fmt.Sprintf("lora-%d", i+1)); err != nil {
			return err
		}
	}
	if g.start.init != "" {
		if g.start.init, err = write("init", g.start.init, "init"+imageExt(g.start.init)); err != nil {
			return err
		}
	}
	if g.start.mask != "" {
		if g.start.mask, err = write("mask", g.start.mask, "mask"+imageExt(g.start.mask)); err != nil {
			return err
		}
	}
	return nil
}

// imageExt is the extension of a reference's original name when it is a known image type, for
// readers that look at it; "" otherwise.
func imageExt(ref string) string {
	_, name, _ := strings.Cut(ref, "|")
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tif", ".tiff", ".heic":
		return ext
	}
	return ""
}
