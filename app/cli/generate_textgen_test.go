package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/imagefile"
	"easel/engine/convert"
	"easel/internal/generatecase"
	"easel/internal/tinysnapshot"
)

// generate --expand writes the image from the expanded prompt and records the idea beside it;
// --check then prints a verdict for each element of that prompt (in --json a "checked" line).
// The untied tiny model writes words (the tied one writes only whitespace on its random weights).
func TestGenerateExpandAndCheck(t *testing.T) {
	model := generatecase.Model(t, tinysnapshot.Permutation{A: 7907, B: 5}, convert.ProfileCortiq)
	out := filepath.Join(t.TempDir(), "expanded.png")
	code, stdout, stderr := run("generate", "--model", model, "--prompt", "a lighthouse", "--expand", "--check",
		"--size", "64x64", "--steps", "2", "--seed", "7", "--backend", "cpu", "--out", out, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var expanded, checked *textEvent
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var e textEvent
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		switch e.Stage {
		case "expanded":
			expanded = &e
		case "checked":
			checked = &e
		}
	}
	if expanded == nil || expanded.Idea != "a lighthouse" || expanded.Prompt == "" || expanded.Tokens == 0 {
		t.Fatalf("no expanded line with the idea and a prompt:\n%s", stdout)
	}
	if checked == nil || checked.Path != out || len(checked.Checks) == 0 {
		t.Errorf("no checked line with verdicts for %s:\n%s", out, stdout)
	}
	m, err := imagefile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Settings == nil || m.Settings.Idea != "a lighthouse" || m.Settings.Prompt != expanded.Prompt {
		t.Errorf("the PNG records idea %q and prompt %q; want %q and %q", m.Settings.Idea, m.Settings.Prompt, "a lighthouse", expanded.Prompt)
	}
	// Without --json the verdicts are lines of ✓ / ✗ / ? and the element.
	code, stdout, stderr = run("generate", "--model", model, "--prompt", "a red lighthouse, two boats", "--check",
		"--size", "64x64", "--steps", "2", "--seed", "7", "--backend", "cpu", "--out", out)
	if code != ExitOK || !strings.Contains(stdout, "check "+out+":") || !strings.Contains(stdout, " a red lighthouse\n") || !strings.Contains(stdout, " two boats\n") {
		t.Errorf("--check: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
