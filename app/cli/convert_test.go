package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/cmf"
	"easel/internal/golden"
)

func TestConvertCommand(t *testing.T) {
	snapshot, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "tiny.cmf")
	code, stdout, stderr := run("convert", snapshot, out, "--profile", "q8")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, out+": 329 tensors") || !strings.Contains(stdout, "left out 12 tensors") || !strings.Contains(stdout, "time_conv") {
		t.Errorf("stdout %q", stdout)
	}
	f, err := cmf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Header().QuantType != "Q8_2F" {
		t.Errorf("--profile q8 wrote quant_type %q", f.Header().QuantType)
	}
}

func TestConvertCommandErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"convert"}, ExitUsage, "usage: easel convert"},
		{[]string{"convert", dir}, ExitUsage, "usage: easel convert"},
		{[]string{"convert", dir, "x.cmf", "--profile", "q3"}, ExitUsage, `unknown profile "q3"`},
		{[]string{"convert", dir, "x.cmf", "--profile"}, ExitUsage, "needs a value"},
		{[]string{"convert", dir, "x.cmf", "--fast"}, ExitUsage, `unknown option "--fast"`},
		{[]string{"convert", dir, filepath.Join(dir, "x.cmf")}, ExitFailure, "model_index.json is missing"},
	}
	for _, c := range cases {
		code, _, stderr := run(c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr, c.code, c.want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("failed conversions left %d files", len(left))
	}
}
