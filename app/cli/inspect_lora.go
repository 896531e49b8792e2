package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"easel/engine/lora"
	"easel/engine/qi21"
)

// inspectLoRA describes what a LoRA file changes: the layers it adapts by kind, their ranks and
// scales, its patches, the tensors it leaves unmatched, its size in memory and its metadata.
func inspectLoRA(path, model string, stdout, stderr io.Writer) int {
	cfg := qi21.PublishedConfig()
	against := "the published Qwen-Image-2.1 transformer"
	if model != "" {
		f, fl := openModel(model)
		if fl != nil {
			fmt.Fprintf(stderr, "easel inspect: %v\n", fl.err)
			return ExitFailure
		}
		defer f.Close()
		js, err := f.ConfigJSON(qi21.ConfigTensor)
		if err == nil {
			cfg, err = qi21.ParseConfig(js)
		}
		if err != nil {
			fmt.Fprintf(stderr, "easel inspect: %s: %v\n", model, err)
			return ExitFailure
		}
		against = model
	}
	f, err := lora.Open(path, qi21.LinearLayers(cfg))
	if err != nil {
		fmt.Fprintf(stderr, "easel inspect: %v\n", err)
		return ExitFailure
	}
	var b strings.Builder
	describeLoRA(&b, f, against)
	io.WriteString(stdout, b.String())
	return ExitOK
}

// layerKind groups a layer name: the block index replaced by N.
func layerKind(name string) string {
	parts := strings.Split(name, ".")
	if len(parts) > 2 && parts[0] == "transformer_blocks" {
		parts[1] = "N"
	}
	return strings.Join(parts, ".")
}

func describeLoRA(b *strings.Builder, f *lora.File, against string) {
	r := f.Report
	fmt.Fprintf(b, "%s\n", f.Path)
	fmt.Fprintf(b, "  sha256        %s (A1111 hash %s)\n", f.SHA256, f.ShortHash)
	fmt.Fprintf(b, "  bound to      %s\n", against)
	fmt.Fprintf(b, "  tensors       %d matched of %d\n", r.Matched, r.Tensors)
	fmt.Fprintf(b, "  layers        %d adapted\n", len(r.Layers))
	fmt.Fprintf(b, "  in memory     %s\n", sizeText(uint64(f.Bytes())))
	if f.Preset != nil {
		fmt.Fprintf(b, "  preset        %s (from its %s)\n", f.Preset.Describe(), f.Preset.Source)
	}
	if len(r.Ranks) > 0 {
		var ranks []int
		for k := range r.Ranks {
			ranks = append(ranks, k)
		}
		sort.Ints(ranks)
		var parts []string
		sum, n := 0, 0
		for _, k := range ranks {
			parts = append(parts, fmt.Sprintf("%d×%d", r.Ranks[k], k))
			sum += k * r.Ranks[k]
			n += r.Ranks[k]
		}
		fmt.Fprintf(b, "  ranks         %s (layers×rank; mean %.1f)\n", strings.Join(parts, ", "), float64(sum)/float64(n))
	}
	type kind struct {
		factors, patches, biases int
		scales                   map[float32]bool
	}
	kinds := map[string]*kind{}
	get := func(name string) *kind {
		k := kinds[layerKind(name)]
		if k == nil {
			k = &kind{scales: map[float32]bool{}}
			kinds[layerKind(name)] = k
		}
		return k
	}
	for _, fc := range f.Factors {
		k := get(fc.Layer)
		k.factors++
		k.scales[fc.Scale] = true
	}
	for _, p := range f.Patches {
		k := get(p.Layer)
		if p.Weight != nil {
			k.patches++
		}
		if p.Bias != nil {
			k.biases++
		}
	}
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	b.WriteString("\ntargets (layer, LoRA factors, weight patches, bias patches, scales alpha/rank)\n")
	for _, n := range names {
		k := kinds[n]
		var sc []string
		for s := range k.scales {
			sc = append(sc, fmt.Sprintf("%g", s))
		}
		sort.Strings(sc)
		fmt.Fprintf(b, "  %-52s %3d %3d %3d  %s\n", n, k.factors, k.patches, k.biases, strings.Join(sc, " "))
	}
	if w := r.Warning(); w != "" {
		fmt.Fprintf(b, "\nnote: %s\n", w)
		for _, u := range r.Unmatched {
			fmt.Fprintf(b, "  unmatched  %s\n", u)
		}
	}
	if len(f.Metadata) > 0 {
		b.WriteString("\nmetadata\n")
		keys := make([]string, 0, len(f.Metadata))
		for k := range f.Metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := f.Metadata[k]
			if len(v) > 200 {
				v = v[:200] + "…"
			}
			fmt.Fprintf(b, "  %s: %s\n", k, v)
		}
	}
}
