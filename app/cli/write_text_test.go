package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/convert"
	"easel/internal/generatecase"
	"easel/internal/tinymodel"
)

// describeImage is a picture to describe, made by the test (no reference case needed).
func describeImage(t *testing.T) string {
	t.Helper()
	return generatecase.PicturePNG(t, 96, 64)
}

func textReportOf(t *testing.T, stdout string) textReport {
	t.Helper()
	var r textReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	return r
}

// describe and expand write on the tiny model: --json carries the text, the token count, the
// rate, the stage times and the seed, and the same seed writes the same text.
func TestDescribeAndExpandWrite(t *testing.T) {
	model := tinymodel.Path(t, convert.Options{Profile: convert.ProfileCortiq})
	img := describeImage(t)
	code, out, errOut := run("describe", "--model", model, img, "--json", "--max-tokens", "6", "--seed", "5", "--backend", "cpu", "--temperature", "3")
	if code != ExitOK {
		t.Fatalf("describe: exit %d: %s", code, errOut)
	}
	r := textReportOf(t, out)
	if r.Tokens < 1 || r.Tokens > 6 || r.Seed != 5 || r.Backend != "cpu" || r.StageTimes["prefill"] <= 0 || r.StageTimes["image"] <= 0 {
		t.Errorf("describe report %+v", r)
	}
	code, out2, _ := run("describe", "--model", model, img, "--json", "--max-tokens", "6", "--seed", "5", "--backend", "cpu", "--temperature", "3", "--question", "What is in it?")
	if code != ExitOK || textReportOf(t, out2).Tokens == 0 {
		t.Errorf("describe with a question: exit %d %s", code, out2)
	}
	a, b := textReportOf(t, out2), textReportOf(t, mustRun(t, "describe", "--model", model, img, "--json", "--max-tokens", "6", "--seed", "5", "--backend", "cpu", "--temperature", "3", "--question", "What is in it?"))
	if a.Text != b.Text || a.Tokens != b.Tokens {
		t.Errorf("the same seed wrote %q then %q", a.Text, b.Text)
	}
	code, out, errOut = run("expand", "--model", model, "a cat asleep on a sunny windowsill", "--max-tokens", "4", "--backend", "cpu")
	if code != ExitOK || !strings.Contains(errOut, "tokens/s on cpu, seed ") {
		t.Errorf("expand: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := run(args...)
	if code != ExitOK {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	return out
}

// Bad input: a file that is not an image exits 6, an empty idea 2, a model file converted before
// Easel could write text 5 with one sentence that says how to get the head.
func TestDescribeAndExpandRefusals(t *testing.T) {
	model := tinymodel.Path(t, convert.Options{Profile: convert.ProfileCortiq})
	notImage := filepath.Join(t.TempDir(), "notes.png")
	if err := os.WriteFile(notImage, []byte("shopping list: milk"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := tinymodel.WithoutHead(t, convert.Options{Profile: convert.ProfileCortiq})
	for _, c := range []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"describe", "--model", model, notImage}, ExitImage, "notes.png"},
		{[]string{"describe", "--model", model, filepath.Join(t.TempDir(), "missing.png")}, ExitImage, "does not exist"},
		{[]string{"expand", "--model", model, "   "}, ExitUsage, "the idea is empty"},
		{[]string{"expand", "--model", model}, ExitUsage, "give the idea"},
		{[]string{"expand", "--model", model, "a fox", "--temperature", "-1"}, ExitUsage, "temperature"},
		{[]string{"expand", "--model", model, "a fox", "--max-tokens", "100000"}, ExitUsage, "from 1 to 4096"},
		{[]string{"expand", "--model", old, "a fox"}, ExitModelInvalid, "lacks the language head"},
		{[]string{"describe", "--model", old, describeImage(t)}, ExitModelInvalid, "convert the snapshot again with `easel convert`"},
		{[]string{"expand", "--model", filepath.Join(t.TempDir(), "none.cmf"), "a fox"}, ExitModelMissing, "does not exist"},
	} {
		code, out, errOut := run(c.args...)
		if code != c.code || !strings.Contains(errOut, c.say) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q), stdout %q", c.args[:2], code, c.code, errOut, c.say, out)
		}
		if c.code == ExitModelInvalid && strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: the old-file message is more than one line: %q", c.args[:2], errOut)
		}
	}
}

// A model file converted before the language head was kept still makes images; only writing
// asks for the head.
func TestAFileWithoutTheHeadStillMakesImages(t *testing.T) {
	old := tinymodel.WithoutHead(t, convert.Options{Profile: convert.ProfileCortiq})
	out := filepath.Join(t.TempDir(), "old.png")
	code, _, errOut := run("generate", "--model", old, "--prompt", "a lighthouse", "--size", "64x64", "--steps", "2", "--seed", "1", "--backend", "cpu", "--out", out)
	if code != ExitOK {
		t.Errorf("generate with a file without the head: exit %d: %s", code, errOut)
	}
	code, _, errOut = run("generate", "--model", old, "--prompt", "a lighthouse", "--check", "--size", "64x64", "--steps", "2", "--seed", "1", "--backend", "cpu", "--out", out)
	if code != ExitModelInvalid || !strings.Contains(errOut, "easel convert") || !strings.Contains(errOut, "no image was made") {
		t.Errorf("generate --check with a file without the head: exit %d: %s", code, errOut)
	}
}
