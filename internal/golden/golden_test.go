package golden

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The shape every public case kind must have, as REFERENCE.md describes it. Sizes that vary per
// case are checked against each other and against the metadata rather than against constants.
func TestGoldenCaseShapes(t *testing.T) {
	kinds := map[string]func(t *testing.T, c *Case){
		"dit":      checkDiT,
		"vae":      checkVAE,
		"textenc":  checkTextEnc,
		"pipeline": checkPipeline,
		"randn":    checkRandn,
	}
	total := 0
	for kind, check := range kinds {
		paths, err := Cases(kind)
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) == 0 {
			t.Errorf("no %s_*.safetensors case in %v", kind, mustDir(t))
		}
		for _, p := range paths {
			total++
			t.Run(filepath.Base(p), func(t *testing.T) {
				c, err := Load(p)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				check(t, c)
			})
		}
	}
	t.Logf("%d case files checked", total)
}

func mustDir(t *testing.T) string {
	d, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func want(t *testing.T, c *Case, name string, shape ...int) {
	t.Helper()
	if got := c.Shape(name); !reflect.DeepEqual(got, shape) {
		t.Errorf("%s: %s has shape %v, want %v", c.Name, name, got, shape)
	}
}

func checkDiT(t *testing.T, c *Case) {
	d, err := c.DiT()
	if err != nil {
		t.Fatal(err)
	}
	shapes := d.Shapes
	tokens := 0
	for _, s := range shapes {
		tokens += s[0] * s[1]
	}
	last := shapes[len(shapes)-1]
	target := last[0] * last[1]
	ehs := c.Shape("encoder_hidden_states")
	if len(ehs) != 3 || ehs[0] != 1 || ehs[2] != 32 {
		t.Fatalf("encoder_hidden_states shape %v, want [1, L, 32]", ehs)
	}
	L := ehs[1]
	want(t, c, "hidden_states", 1, tokens, 64)
	// encoder_hidden_states has one row per VL position, condition-image slots included (one
	// slot per 2×2 group of latent tokens); the mask adds T/4 trailing slots for the target. In the
	// joint sequence every image slot becomes 4 rows.
	cond := tokens - target
	want(t, c, "img_mask", 1, L+target/4)
	S := L - cond/4 + tokens
	// One full_out_i and one cached_out_i per σ; cached_out_0 (extract mode) has every row.
	for i := range d.Sigmas {
		want(t, c, fmt.Sprintf("full_out_%d", i), 1, S, 64)
		if i == 0 {
			want(t, c, "cached_out_0", 1, S, 64)
		} else {
			want(t, c, fmt.Sprintf("cached_out_%d", i), 1, target, 64)
		}
	}
	for k := range d.Conditions() {
		s := shapes[k]
		want(t, c, fmt.Sprintf("cond_latents_%d", k), 1, s[0]*s[1], 64)
	}
}

func checkVAE(t *testing.T, c *Case) {
	z := c.Shape("z")
	if len(z) != 5 || z[1] != 64 || z[2] != 1 {
		t.Fatalf("z shape %v, want [1,64,1,h,w]", z)
	}
	h, w := z[3], z[4]
	want(t, c, "z_normalized", 1, 64, 1, h, w)
	want(t, c, "decoded", 1, 4, 1, 16*h, 16*w)
	want(t, c, "image", 1, 4, 1, 16*h, 16*w)
	want(t, c, "encoded_mode", 1, 64, 1, h, w)
	want(t, c, "encoded_normalized", 1, 64, 1, h, w)
}

func checkTextEnc(t *testing.T, c *Case) {
	ids := c.Shape("input_ids")
	if len(ids) != 2 || ids[0] != 1 {
		t.Fatalf("input_ids shape %v", ids)
	}
	want(t, c, "last_hidden_prenorm", 1, ids[1], 32)
	if _, ok := c.Meta["prompt"].(string); !ok {
		t.Errorf("%s: metadata has no prompt", c.Name)
	}
}

func checkPipeline(t *testing.T, c *Case) {
	p, err := c.Pipeline()
	if err != nil {
		t.Fatal(err)
	}
	shapes := p.Shapes
	h, w := p.Target()
	target := h * w
	want(t, c, "image_np", 16*h, 16*w, 4)
	if p.Width != 0 && (p.Width != 16*w || p.Height != 16*h) {
		t.Errorf("%s: asked for %d×%d, img_shapes' target is %d×%d", c.Name, p.Width, p.Height, 16*w, 16*h)
	}
	want(t, c, "steps_latents", p.Steps, 1, target, 64)
	n := c.Shape("te0_input_ids")
	want(t, c, "te0_attention_mask", n...)
	if p.CFG > 1 != c.Has("te1_input_ids") {
		t.Errorf("%s: cfg %v but te1_input_ids present=%v", c.Name, p.CFG, c.Has("te1_input_ids"))
	}
	ehs := c.Shape("dit0_encoder_hidden_states")
	if len(ehs) != 3 || ehs[1] != n[1]-14 || ehs[2] != 32 {
		t.Errorf("%s: dit0_encoder_hidden_states %v, want [1, %d (te0 tokens minus the 14-token system prefix)... ] — unless images change the count", c.Name, ehs, n[1]-14)
	}
	want(t, c, "dit0_img_mask", 1, ehs[1]+target/4)
	cond := p.Conditions()
	tokens := 0
	for _, s := range shapes {
		tokens += s[0] * s[1]
	}
	want(t, c, "dit0_hidden_states", 1, tokens, 64)
	for k := range cond {
		s := shapes[k]
		want(t, c, fmt.Sprintf("vae_encode_input_%d", k), 1, 4, 1, 16*s[0], 16*s[1])
		if _, err := os.Stat(filepath.Join(filepath.Dir(c.Path), p.CondImages[k])); err != nil {
			t.Errorf("%s: condition image %d: %v", c.Name, k, err)
		}
	}
	if cond > 0 {
		pv := c.Shape("te0_pixel_values")
		if len(pv) != 2 || pv[1] != 1536 {
			t.Errorf("%s: te0_pixel_values %v, want [n, 1536]", c.Name, pv)
		}
		want(t, c, "te0_image_grid_thw", cond, 3)
	}
}

func checkRandn(t *testing.T, c *Case) {
	list, ok := c.Meta["cases"].([]any)
	if !ok || len(list) == 0 {
		t.Fatalf("%s: metadata lists no cases", c.Name)
	}
	for _, e := range list {
		m := e.(map[string]any)
		var shape []int
		for _, d := range m["shape"].([]any) {
			shape = append(shape, int(d.(float64)))
		}
		want(t, c, m["key"].(string), shape...)
	}
}

func TestGoldenJSONCases(t *testing.T) {
	for _, name := range []string{"scheduler_cases.json", "tokenizer_cases.json"} {
		p, err := Path(name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Errorf("%s is not JSON: %v", name, err)
		}
	}
}

func TestModelSnapshotIsTheOneWithModelIndex(t *testing.T) {
	p, err := ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(p, "model_index.json")); err != nil {
		t.Errorf("snapshot %s: %v", p, err)
	}
	for _, sub := range []string{"transformer", "text_encoder", "vae", "processor", "scheduler"} {
		if _, err := os.Stat(filepath.Join(p, sub)); err != nil {
			t.Errorf("snapshot lacks %s: %v", sub, err)
		}
	}
}

func TestEnvDirOverrides(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvDir, dir)
	got, err := Dir()
	if err != nil || got != dir {
		t.Fatalf("Dir() = %q, %v; want %q", got, err, dir)
	}
	paths, err := Cases("dit")
	if err != nil || len(paths) != 0 {
		t.Fatalf("empty override dir gave %v, %v", paths, err)
	}
	t.Setenv(EnvDir, filepath.Join(dir, "missing"))
	if _, err := Dir(); err == nil {
		t.Fatal("a missing EASEL_GOLDEN_DIR must be an error")
	}
}

func TestRelErr(t *testing.T) {
	if e := RelErr([]float32{1, 2}, []float32{1, 2}); e != 0 {
		t.Fatal(e)
	}
	if e := RelErr([]float32{0, 2}, []float32{0, 1}); e != 1 {
		t.Fatalf("RelErr = %v, want 1", e)
	}
	if e := MaxAbsErr([]float32{0, 2.5}, []float32{0, 1}); e != 1.5 {
		t.Fatalf("MaxAbsErr = %v", e)
	}
}
