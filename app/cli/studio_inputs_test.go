package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/studio"
	"easel/app/studiogen"
)

// A job names its files by content only: an input named ../x, a file argument naming a path on
// the worker, or a flag that reads or writes a file is refused before anything is fetched,
// written or opened, and the refusal says nothing of the worker's files.
func TestStudioJobNamingPathsIsRefused(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &studioRenderer{modelPath: filepath.Join(t.TempDir(), "model.cmf")}
	fetched := 0
	inputs := func(context.Context, string) ([]byte, error) { fetched++; return []byte("data"), nil }
	good := studioInputRef + studio.InputName([]byte("data")) + "|a.png"
	cases := map[string][]string{
		"input ../x":         {"--prompt", "p", "--image", studioInputRef + "../x|a.png"},
		"input ../x as name": {"--prompt", "p", "--image", studioInputRef + "sha256-" + strings.Repeat("0", 64) + "|../../x.png"},
		"--image path":       {"--prompt", "p", "--image", outside},
		"--image= path":      {"--prompt", "p", "--image=" + outside},
		"--init path":        {"--prompt", "p", "--init", "/etc/hostname"},
		"--mask path":        {"--prompt", "p", "--init", good, "--mask", outside},
		"-lora path":         {"--prompt", "p", "-lora", outside + ":0.5"},
		"--out":              {"--prompt", "p", "--out", filepath.Join(filepath.Dir(outside), "x.png")},
		"--from":             {"--prompt", "p", "--from", outside},
		"--checkpoint":       {"--prompt", "p", "--checkpoint", filepath.Join(filepath.Dir(outside), "c")},
		"--render-on":        {"--prompt", "p", "--render-on", "127.0.0.1:1"},
		"--grid-x":           {"--prompt", "p", "--grid-x", "steps=1,2"},
	}
	for name, args := range cases {
		data, _ := json.Marshal(studioRequest{Args: args, BatchID: "b", Count: 1})
		_, err := r.Render(context.Background(), &studio.Job{Batch: "b", Request: data}, inputs, func(studio.Step) {})
		if err == nil {
			t.Errorf("%s: the job was taken", name)
			continue
		}
		if strings.Contains(err.Error(), "no such file") || strings.Contains(err.Error(), "is not an image") || strings.Contains(err.Error(), tmp) {
			t.Errorf("%s: the refusal tells of the worker's files: %v", name, err)
		}
		t.Logf("%s: %v", name, err)
	}
	// a pipeline request (easel serve --studio, the window) with an input named ../x
	for _, pr := range []studiogen.PipelineRequest{
		{Prompt: "p", Images: []string{"../x"}},
		{Prompt: "p", LoRAFiles: []studiogen.LoRARef{{Input: "../../x", Name: "x.safetensors"}}},
		{Prompt: "p", InitImage: "/etc/hostname"},
	} {
		data, _ := json.Marshal(studioRequest{Pipeline: &pr, BatchID: "b", Count: 1})
		if _, err := r.Render(context.Background(), &studio.Job{Batch: "b", Request: data}, inputs, func(studio.Step) {}); err == nil {
			t.Errorf("pipeline request %+v was taken", pr)
		}
	}
	if fetched != 0 {
		t.Errorf("%d inputs were fetched for refused jobs", fetched)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("refused jobs left %d entries in the temporary folder: %v", len(left), left)
	}
	if b, _ := os.ReadFile(outside); string(b) != "secret" {
		t.Errorf("the file outside was changed")
	}
	if entries, _ := os.ReadDir(filepath.Dir(outside)); len(entries) != 1 {
		t.Errorf("files were written beside the outside file: %v", entries)
	}
}

// The files a job does name are written under its folder under fixed names, whatever name they
// came with.
func TestStudioJobFilesGetFixedNames(t *testing.T) {
	dir := t.TempDir()
	data := []byte("a LoRA")
	ref := studioInputRef + studio.InputName(data)
	g, err := checkStudioJobArgs([]string{"--prompt", "p", "--image", ref + "|..png", "--lora", ref + "|..\x000.5",
		"--init", ref + "|start.jpg"}, "m.cmf")
	if err != nil {
		t.Fatal(err)
	}
	inputs := func(context.Context, string) ([]byte, error) { return data, nil }
	if err := fetchStudioFiles(context.Background(), g, inputs, dir); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "image-1.png"), filepath.Join(dir, "lora-1", "lora.safetensors") + ":0.5", filepath.Join(dir, "init.jpg")}
	got := []string{g.images[0], g.loras[0], g.start.init}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("file %d written as %s, want %s", i, got[i], want[i])
		}
	}
}

// A worker killed with kill -9 leaves its job folder; the next worker to start removes it, and
// leaves a live worker's folder alone.
func TestLeftoverJobFoldersAreRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := filepath.Join(tmp, studioJobDirPrefix+"999999999-abc")
	live := filepath.Join(tmp, studioJobDirPrefix+"1-abc") // pid 1 always runs
	for _, d := range []string{dead, live} {
		if err := os.MkdirAll(filepath.Join(d, "lora-1"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if n := removeLeftoverJobDirs(); n != 1 {
		t.Errorf("removed %d folders, want 1", n)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead worker's folder is still there")
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the live worker's folder was removed: %v", err)
	}
}
