package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestInspectDescribesTheModel(t *testing.T) {
	path, counts := smallModel(t)
	code, out, errOut := run("inspect", path)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"arch          qwen_image21",
		"quant_type    Q4_BLOCK",
		"features      TENSOR_DIR|QUANT_2F (0x5)",
		"BPE, 151643 tokens + 26 added", // the real Qwen tokenizer (testdata/golden/REFERENCE.md)
		"\ndit.config_json\n",
		`"_class_name": "QwenImage21Transformer2DModel"`,
		"\nqi21.scheduler_json\n",
		"\nprovenance\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for component, n := range counts {
		line := regexp.MustCompile(fmt.Sprintf(`(?m)^  %-5s %5d tensors? `, regexp.QuoteMeta(component), n))
		if !line.MatchString(out) {
			t.Errorf("no line saying component %s has %d tensors:\n%s", component, n, out)
		}
	}
	if !regexp.MustCompile(`(?m)^ +q4tp +\d+ tensors`).MatchString(out) || !regexp.MustCompile(`(?m)^ +q8_2f +1 tensor `).MatchString(out) {
		t.Errorf("codec breakdown missing:\n%s", out)
	}

	code, out, _ = run("inspect", "--tensors", path)
	if code != ExitOK || !strings.Contains(out, "te.layers.0.mlp.gate_proj.weight  q8_2f  [96 32]  3328  ") {
		t.Errorf("--tensors: exit %d, no line for the q8_2f tensor:\n%s", code, out)
	}
}

func TestInspectRefusals(t *testing.T) {
	if code, _, _ := run("inspect"); code != ExitUsage {
		t.Errorf("no file: exit %d, want %d", code, ExitUsage)
	}
	missing := filepath.Join(t.TempDir(), "nope.cmf")
	if code, _, errOut := run("inspect", missing); code != ExitFailure || !strings.Contains(errOut, missing) {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
	path, _ := smallModel(t)
	b, _ := os.ReadFile(path)
	copy(b, "GGUF")
	os.WriteFile(path, b, 0o644)
	if code, _, errOut := run("inspect", path); code != ExitFailure || !strings.Contains(errOut, "magic") {
		t.Errorf("not a CMF file: exit %d, stderr %q", code, errOut)
	}
}
