package convert

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"easel/engine/published"
)

// The enumeration from configs names every tensor of the tiny snapshot at its shape, and no other
// (the VAE's unused time_conv and a tied lm_head aside), for each component.
func TestLayoutListsTheSnapshotsTensors(t *testing.T) {
	dir := tinySnapshot(t)
	for _, c := range []struct {
		comp   component
		config string
		list   func([]byte) ([]sourceTensor, error)
	}{
		{transformerComponent, "transformer/config.json", ditTensors},
		{textEncoderComponent, "text_encoder/config.json", textEncoderTensors},
		{vaeComponent, "vae/config.json", vaeTensors},
	} {
		raw, err := os.ReadFile(filepath.Join(dir, c.config))
		if err != nil {
			t.Fatal(err)
		}
		listed, err := c.list(raw)
		if err != nil {
			t.Fatalf("%s: %v", c.config, err)
		}
		var got, want []string
		for _, s := range listed {
			got = append(got, fmt.Sprint(s.name, s.shape))
		}
		shards, err := openComponent(dir, c.comp)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range shards {
			for _, st := range s.tensors {
				if strings.Contains(st.Name, ".time_conv.") || strings.HasPrefix(st.Name, "lm_head.") {
					continue
				}
				want = append(want, fmt.Sprint(st.Name, st.Shape))
			}
			s.close()
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			for _, g := range got {
				if !slices.Contains(want, g) {
					t.Errorf("%s: listed but not in the snapshot: %s", c.comp.dir, g)
				}
			}
			for _, w := range want {
				if !slices.Contains(got, w) {
					t.Errorf("%s: in the snapshot but not listed: %s", c.comp.dir, w)
				}
			}
		}
	}
}

// The published configs list the published model: 297 DiT tensors of 7.1 G parameters (spec §6.2)
// and the VAE's 238 tensors less its 12 time_conv tensors (Appendix A).
func TestLayoutOfThePublishedModel(t *testing.T) {
	pub := published.Files()
	dit, err := ditTensors(pub["transformer/config.json"])
	if err != nil {
		t.Fatal(err)
	}
	var params int64
	for _, s := range dit {
		params += countElements(s.shape)
	}
	if len(dit) != 297 || params != 7_115_124_736 {
		t.Errorf("DiT: %d tensors, %d parameters; want 297 and 7115124736", len(dit), params)
	}
	vae, err := vaeTensors(pub["vae/config.json"])
	if err != nil {
		t.Fatal(err)
	}
	if len(vae) != 238-12 {
		t.Errorf("VAE: %d tensors, want 226 (238 less 12 time_conv)", len(vae))
	}
}
