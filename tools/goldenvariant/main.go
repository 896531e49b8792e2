// Command goldenvariant builds another folder of reference cases in the format of
// testdata/golden from the public cases, so the parity tests can be run against a folder that is
// not the one they were written beside (EASEL_GOLDEN_DIR). Every file keeps its reference
// values: without the reference implementation no new outputs can be computed, so the variant
// varies only what the format leaves free — which cases exist, their names and order, the names
// of the condition images and of the model snapshot's folder, and whether debug/ exists:
//
//   - debug/ is left out (or, with -keep-debug vae, only the VAE's stages are kept, pointed at the
//     renamed case);
//   - dit: dit_ti2i_one is dropped and the other two renamed so the one with two condition images
//     sorts first (two DiT cases, in another order);
//   - pipeline: pipeline_t2i is dropped (no case without CFG is left); pipeline_ti2i_two and its
//     condition PNGs are renamed, the case's cond_images rewritten to the new names;
//   - vae, textenc: renamed, one textenc case dropped;
//   - generate: generate_expand dropped, generate_describe and its image renamed (image_png rewritten);
//   - upscale: upscale_rrdb_x2 dropped, the other cases renamed into another order and their weight
//     files renamed (NAME_LAYOUT_N.EXT), the case's meta "weights" rewritten to the new names;
//   - the tiny model snapshot is copied into a folder with another name.
//
// With -pipeline cfg1 the folder holds a single pipeline case instead, pipeline_t2i renamed: CFG
// 1 (one program), no negative prompt, no condition images. The tests of behaviour (declines,
// cancellation, a truncated file) build their own requests, so none of them may skip on it.
//
// Usage: go run ./tools/goldenvariant [-from testdata/golden] [-keep-debug vae] [-pipeline cfg1] OUT_DIR
// (tools/goldenvariant.sh builds one and runs every golden test against it).
package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// renames maps a public case file (without .safetensors) to its name in the variant; cases not
// listed are dropped.
var renames = map[string]string{
	"dit_ti2i_two":      "dit_a",
	"dit_t2i":           "dit_b",
	"pipeline_ti2i_two": "pipeline_a",
	"pipeline_t2i_cfg":  "pipeline_b",
	"vae_4x4":           "vae_a",
	"vae_2x3":           "vae_b",
	"textenc_t2i_1":     "textenc_a",
	"randn_cases":       "randn_cases",
	"generate_describe": "generate_a",
}

// pngRenames maps condition images to their names in the variant.
var pngRenames = map[string]string{
	"pipeline_ti2i_two_cond0.png": "pipeline_a_first.png",
	"pipeline_ti2i_two_cond1.png": "pipeline_a_second.png",
	"generate_describe.png":       "generate_a_image.png",
}

// cfg1Pipeline is the one pipeline case of -pipeline cfg1, which replaces the pipeline cases of
// renames (and their condition images).
var cfg1Pipeline = map[string]string{"pipeline_t2i": "pipeline_only"}

// upscaleRenames maps a public upscale_* case (NAME.ref.safetensors beside its weight files) to its
// name in the variant; cases not listed are dropped.
var upscaleRenames = map[string]string{
	"upscale_srvgg_x4":     "upscale_a",
	"upscale_rrdb_x4":      "upscale_b",
	"upscale_rrdb_x4_rgba": "upscale_c",
	"upscale_rrdb_x4_big":  "upscale_d",
}

// copied are files copied as they are.
var copied = []string{"scheduler_cases.json", "tokenizer_cases.json"}

func main() {
	from := flag.String("from", "testdata/golden", "the folder of public cases")
	keepDebug := flag.String("keep-debug", "", `keep only this kind of debug/ stages ("vae"); default: no debug/ at all`)
	pipelines := flag.String("pipeline", "", `"cfg1": a single pipeline case with CFG 1 and no condition images; default: two CFG cases`)
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./tools/goldenvariant [-from DIR] [-keep-debug vae] [-pipeline cfg1] OUT_DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := build(*from, flag.Arg(0), *keepDebug, *pipelines); err != nil {
		fmt.Fprintln(os.Stderr, "goldenvariant:", err)
		os.Exit(1)
	}
}

func build(from, out, keepDebug, pipelines string) error {
	if keepDebug != "" && keepDebug != "vae" {
		return fmt.Errorf("-keep-debug %q: only \"vae\" can be kept (its case is renamed consistently)", keepDebug)
	}
	if pipelines != "" && pipelines != "cfg1" {
		return fmt.Errorf("-pipeline %q: the only other set of pipeline cases is \"cfg1\"", pipelines)
	}
	cases, pngs := renames, pngRenames
	if pipelines == "cfg1" {
		cases, pngs = map[string]string{}, map[string]string{}
		for name, to := range renames {
			if !strings.HasPrefix(name, "pipeline_") {
				cases[name] = to
			}
		}
		for name, to := range pngRenames {
			if !strings.HasPrefix(name, "pipeline_") {
				pngs[name] = to // the other cases' images stay
			}
		}
		for name, to := range cfg1Pipeline {
			cases[name] = to
		}
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty: give a new or empty folder", out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name, to := range cases {
		edit := func(meta map[string]any) {}
		if name == "generate_describe" {
			edit = func(meta map[string]any) { meta["image_png"] = pngRenames["generate_describe.png"] }
		}
		if name == "pipeline_ti2i_two" {
			edit = func(meta map[string]any) {
				list, _ := meta["cond_images"].([]any)
				for i, v := range list {
					s, _ := v.(string)
					if r, ok := pngRenames[s]; ok {
						list[i] = r
					}
				}
			}
		}
		if err := rewriteCase(filepath.Join(from, name+".safetensors"), filepath.Join(out, to+".safetensors"), edit); err != nil {
			return err
		}
	}
	for name, to := range upscaleRenames {
		if err := renameUpscaleCase(from, out, name, to); err != nil {
			return err
		}
	}
	for name, to := range pngs {
		if err := copyFile(filepath.Join(from, name), filepath.Join(out, to)); err != nil {
			return err
		}
	}
	for _, name := range copied {
		if err := copyFile(filepath.Join(from, name), filepath.Join(out, name)); err != nil {
			return err
		}
	}
	if keepDebug == "vae" {
		if err := os.MkdirAll(filepath.Join(out, "debug"), 0o755); err != nil {
			return err
		}
		err := rewriteCase(filepath.Join(from, "debug", "debug_vae_2x3.safetensors"), filepath.Join(out, "debug", "debug_vae_b.safetensors"),
			func(meta map[string]any) { meta["case"] = renames["vae_2x3"] })
		if err != nil {
			return err
		}
	}
	return copyTree(filepath.Join(from, "tiny-qwen-image-2.1"), filepath.Join(out, "snapshot-renamed"))
}

// renameUpscaleCase copies the upscale case name (NAME.ref.safetensors) as to, its weight files
// renamed to TO_LAYOUT_N.EXT and its meta's "weights" rewritten to those names.
func renameUpscaleCase(from, out, name, to string) error {
	var copyErr error
	edit := func(meta map[string]any) {
		ws, _ := meta["weights"].(map[string]any)
		for layout, v := range ws {
			list, _ := v.([]any)
			for i, f := range list {
				file, _ := f.(string)
				renamed := fmt.Sprintf("%s_%s_%d%s", to, layout, i, filepath.Ext(file))
				if filepath.Ext(file) == ".safetensors" { // beside the .pth of the same layout: same name
					renamed = fmt.Sprintf("%s_%s_0%s", to, layout, filepath.Ext(file))
				}
				if err := copyFile(filepath.Join(from, file), filepath.Join(out, renamed)); err != nil && copyErr == nil {
					copyErr = err
				}
				list[i] = renamed
			}
		}
	}
	if err := rewriteCase(filepath.Join(from, name+".ref.safetensors"), filepath.Join(out, to+".ref.safetensors"), edit); err != nil {
		return err
	}
	return copyErr
}

// rewriteCase copies a safetensors case, passing the JSON description in its metadata through
// edit. The tensors' bytes and offsets are unchanged; the header is padded to 8 bytes.
func rewriteCase(from, to string, edit func(map[string]any)) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if len(data) < 8 {
		return fmt.Errorf("%s: too short for a safetensors file", from)
	}
	n := binary.LittleEndian.Uint64(data)
	if n > uint64(len(data)-8) {
		return fmt.Errorf("%s: header length %d past the end of the file", from, n)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+n], &header); err != nil {
		return fmt.Errorf("%s: header: %v", from, err)
	}
	var md map[string]string
	if raw, ok := header["__metadata__"]; ok {
		if err := json.Unmarshal(raw, &md); err != nil {
			return fmt.Errorf("%s: __metadata__: %v", from, err)
		}
	}
	for _, key := range []string{"json", "meta"} { // the description's key ("meta": upscale_*)
		js, ok := md[key]
		if !ok {
			continue
		}
		var meta map[string]any
		if err := json.Unmarshal([]byte(js), &meta); err != nil {
			return fmt.Errorf("%s: metadata %s: %v", from, key, err)
		}
		edit(meta)
		b, err := json.Marshal(meta)
		if err != nil {
			return err
		}
		md[key] = string(b)
		if header["__metadata__"], err = json.Marshal(md); err != nil {
			return err
		}
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	outData := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	outData = append(append(outData, h...), data[8+n:]...)
	return os.WriteFile(to, outData, 0o644)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func copyTree(from, to string) error {
	if _, err := os.Stat(filepath.Join(from, "model_index.json")); err != nil {
		return fmt.Errorf("%s is not the model snapshot: %w", from, err)
	}
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return errors.New(path + ": not a regular file")
		}
		if strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		return copyFile(path, dst)
	})
}
