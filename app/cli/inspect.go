package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"easel/engine/cmf"
	"easel/engine/quant"
)

func init() {
	register(&Command{
		Name:    "inspect",
		Usage:   "[--tensors] FILE.cmf | [--model M.cmf] LORA.safetensors",
		Summary: "show a model file's architecture, tensors, codecs and configs, or what a LoRA changes",
		Run:     runInspect,
	})
}

// componentOrder is how cortiq's Qwen-Image-2.1 layout names its parts; others follow, sorted.
var componentOrder = []string{"dit", "te", "vis", "vae", "qi21"}

var componentTitles = map[string]string{
	"dit": "denoiser", "te": "text encoder", "vis": "vision tower", "vae": "VAE", "qi21": "pipeline configs",
}

func runInspect(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listTensors := fs.Bool("tensors", false, "also list every tensor: name, codec, shape, bytes, offset")
	model := fs.String("model", "", "for a LoRA: the model file to bind it to (default: the published Qwen-Image-2.1 geometry)")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: easel inspect [--tensors] FILE.cmf\n       easel inspect [--model M.cmf] LORA.safetensors")
		return ExitUsage
	}
	if strings.EqualFold(filepath.Ext(fs.Arg(0)), ".safetensors") {
		return inspectLoRA(fs.Arg(0), *model, stdout, stderr)
	}
	f, err := cmf.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "easel inspect: %v\n", err)
		return ExitFailure
	}
	defer f.Close()
	var b strings.Builder
	describe(&b, f, *listTensors)
	io.WriteString(stdout, b.String())
	return ExitOK
}

// describe writes the human-readable summary of an open model file.
func describe(b *strings.Builder, f *cmf.File, listTensors bool) {
	h := f.Header()
	env := f.Envelope()
	fmt.Fprintf(b, "%s\n", f.Path())
	fmt.Fprintf(b, "  file          %s, CMF v%d\n", sizeText(uint64(f.Size())), env.Version)
	fmt.Fprintf(b, "  arch          %s\n", h.Arch.Name)
	fmt.Fprintf(b, "  quant_type    %s\n", h.QuantType)
	fmt.Fprintf(b, "  features      %s (%#x)\n", env.RequiredFeatures, uint32(env.RequiredFeatures))
	var weights uint64
	for _, e := range f.Entries() {
		weights += e.Size
	}
	fmt.Fprintf(b, "  tensors       %d, %s of payload\n", len(f.Entries()), sizeText(weights))
	fmt.Fprintf(b, "  vocab         %s\n", vocabText(f.Vocab()))
	fmt.Fprintf(b, "  text encoder  hidden %d, %d layers, %d heads (%d kv) x %d, vocab %d (from the header arch)\n",
		h.Arch.HiddenSize, h.Arch.NumLayers, h.Arch.NumAttentionHeads, h.Arch.NumKVHeads, h.Arch.HeadDim, h.Arch.VocabSize)
	fmt.Fprintf(b, "  language head %s\n", languageHeadText(f))

	b.WriteString("\ncomponents\n")
	for _, c := range components(f.Entries()) {
		title := componentTitles[c.name]
		if title != "" {
			title = " (" + title + ")"
		}
		fmt.Fprintf(b, "  %-5s %5d %-7s %10s%s\n", c.name, c.count, plural(c.count, "tensor"), sizeText(c.bytes), title)
		for _, k := range c.codecs {
			fmt.Fprintf(b, "          %-9s %5d %-7s %10s\n", k.dtype, k.count, plural(k.count, "tensor"), sizeText(k.bytes))
		}
	}

	var configs []string
	for _, e := range f.Entries() {
		if e.DType == quant.U8 && (strings.HasSuffix(e.Name, "_json")) {
			configs = append(configs, e.Name)
		}
	}
	for _, name := range configs {
		fmt.Fprintf(b, "\n%s\n", name)
		raw, err := f.ConfigJSON(name)
		if err != nil {
			fmt.Fprintf(b, "  (unreadable: %v)\n", err)
			continue
		}
		b.WriteString(indentJSON(raw))
	}
	if len(h.Provenance) > 0 {
		b.WriteString("\nprovenance\n")
		b.WriteString(indentJSON(h.Provenance))
	}
	if listTensors {
		b.WriteString("\ntensors (name, codec, shape, bytes, offset in the data section)\n")
		for _, e := range f.Entries() {
			fmt.Fprintf(b, "  %s  %s  %v  %d  %d\n", e.Name, e.DType, e.Shape, e.Size, e.Offset)
		}
	}
}

type codecUse struct {
	dtype quant.DType
	count int
	bytes uint64
}

type component struct {
	name   string
	count  int
	bytes  uint64
	codecs []codecUse // largest first
}

// components groups tensors by the prefix before their first dot.
func components(entries []cmf.Entry) []component {
	byName := map[string]*component{}
	for _, e := range entries {
		name, _, ok := strings.Cut(e.Name, ".")
		if !ok {
			name = "(none)"
		}
		c := byName[name]
		if c == nil {
			c = &component{name: name}
			byName[name] = c
		}
		c.count++
		c.bytes += e.Size
		i := slices.IndexFunc(c.codecs, func(k codecUse) bool { return k.dtype == e.DType })
		if i < 0 {
			c.codecs = append(c.codecs, codecUse{dtype: e.DType})
			i = len(c.codecs) - 1
		}
		c.codecs[i].count++
		c.codecs[i].bytes += e.Size
	}
	var out []component
	for _, c := range byName {
		sort.SliceStable(c.codecs, func(i, j int) bool { return c.codecs[i].bytes > c.codecs[j].bytes })
		out = append(out, *c)
	}
	rank := func(n string) int {
		if i := slices.Index(componentOrder, n); i >= 0 {
			return i
		}
		return len(componentOrder)
	}
	sort.Slice(out, func(i, j int) bool {
		ri, rj := rank(out[i].name), rank(out[j].name)
		if ri != rj {
			return ri < rj
		}
		return out[i].name < out[j].name
	})
	return out
}

// vocabText describes the vocab section: a Hugging Face tokenizer.json.
func vocabText(v []byte) string {
	if len(v) == 0 {
		return "none (no tokenizer in the file)"
	}
	var tok struct {
		Model struct {
			Type  string         `json:"type"`
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
		AddedTokens []struct {
			ID int `json:"id"`
		} `json:"added_tokens"`
	}
	if err := json.Unmarshal(v, &tok); err != nil {
		return fmt.Sprintf("%s, not a readable tokenizer.json (%v)", sizeText(uint64(len(v))), err)
	}
	return fmt.Sprintf("tokenizer.json, %s: %s, %d tokens + %d added", sizeText(uint64(len(v))), tok.Model.Type, len(tok.Model.Vocab), len(tok.AddedTokens))
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// indentJSON pretty-prints JSON, indented under a heading.
func indentJSON(raw []byte) string {
	var out bytes.Buffer
	raw = bytes.TrimSpace(raw)
	if err := json.Indent(&out, raw, "  ", "  "); err != nil {
		return "  " + string(raw) + "\n"
	}
	return "  " + out.String() + "\n"
}

// sizeText prints a byte count as people read file sizes.
func sizeText(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
