package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/checkpoint"
)

// childEnv makes the test binary run as the easel command (TestMain).
const childEnv = "EASEL_CLI_TEST_CHILD"

// killAfter runs `easel generate ARGS --json` as a real process and kills it with SIGKILL right
// after the first "checkpoint" event stop accepts: no sleeps, the kill follows a checkpoint in
// place. It returns that event. The process must not finish first.
func killAfter(t *testing.T, args []string, stop func(ev jsonEvent) bool) jsonEvent {
	t.Helper()
	cmd := exec.Command(os.Args[0], append(append([]string{"generate"}, args...), "--json")...)
	cmd.Env = append(os.Environ(), childEnv+"=1", EveryStepEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev jsonEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "checkpoint" || !stop(ev) {
			continue
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = bytes.NewBuffer(nil).ReadFrom(stdout) }()
		cmd.Wait()
		return ev
	}
	cmd.Wait()
	t.Fatalf("easel generate %s ended (%v) before the checkpoint to stop at: %s", strings.Join(args, " "), cmd.ProcessState, stderr.String())
	return jsonEvent{}
}

// checkKillAndResume runs args to the end (out.png), then again with --checkpoint, killed by
// SIGKILL after the first checkpoint stop accepts, and resumes it with --resume: every image of
// the resumed run equals the uninterrupted run's bit for bit, and the checkpoint and its stored
// copies are gone. images are the files a run writes (batch names), relative to the out name.
func checkKillAndResume(t *testing.T, args []string, images []string, stop func(ev jsonEvent) bool) {
	t.Helper()
	checkKillAndResumeAfter(t, args, images, stop, nil)
}

// checkKillAndResumeAfter is checkKillAndResume with meanwhile run between the kill and the
// resume (an input file moved away, say).
func checkKillAndResumeAfter(t *testing.T, args []string, images []string, stop func(ev jsonEvent) bool, meanwhile func()) {
	t.Helper()
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.png")
	if code, _, stderr := run(append(append([]string{"generate"}, args...), "--out", whole)...); code != ExitOK {
		t.Fatalf("uninterrupted: exit %d: %s", code, stderr)
	}
	ck := filepath.Join(dir, "run.ckpt")
	cut := filepath.Join(dir, "cut.png")
	ev := killAfter(t, append(args, "--out", cut, "--checkpoint", ck), stop)
	saved, err := checkpoint.Read(ck)
	if err != nil {
		t.Fatalf("after the kill at %+v: %v", ev, err)
	}
	if meanwhile != nil {
		meanwhile()
	}
	code, stdout, stderr := run("generate", "--resume", ck, "--json")
	if code != ExitOK {
		t.Fatalf("resume after step %d: exit %d: %s", ev.Step, code, stderr)
	}
	// The resumed run continues: no step before the saved one runs again.
	ran := 0
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var e jsonEvent
		if json.Unmarshal([]byte(line), &e) != nil || e.Stage != "denoising" || e.Sigma == 0 { // a step ran (the stage's start carries no σ)
			continue
		}
		pass, img := max(e.Pass, 1), 0
		if e.Image != nil {
			img = *e.Image - 1
		}
		switch {
		case pass < saved.Pass || pass == saved.Pass && img < saved.Image:
			t.Errorf("resumed at pass %d image %d step %d, it ran step %d of pass %d image %d again", saved.Pass, saved.Image+1, saved.Step, e.Step, pass, img+1)
		case pass == saved.Pass && img == saved.Image:
			ran++
		}
	}
	if ran != saved.Steps-saved.Step {
		t.Errorf("resumed after step %d of %d: %d steps ran, want %d", saved.Step, saved.Steps, ran, saved.Steps-saved.Step)
	}
	for _, name := range images {
		w := strings.Replace(name, "OUT", "whole", 1)
		c := strings.Replace(name, "OUT", "cut", 1)
		if !bytes.Equal(pixelsOf(t, filepath.Join(dir, c)), pixelsOf(t, filepath.Join(dir, w))) {
			t.Errorf("killed after step %d (image %v, pass %d) and resumed: %s differs from the uninterrupted run's", ev.Step, ev.Image, ev.Pass, c)
		}
	}
	for _, gone := range []string{ck, checkpoint.FilesDir(ck)} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the image was saved (%v)", gone, err)
		}
	}
}

// atStep stops at a checkpoint of step k or later (of image img in a batch, 0 for any; of pass).
func atStep(k, img, pass int) func(ev jsonEvent) bool {
	return func(ev jsonEvent) bool {
		p := max(ev.Pass, 1)
		i := 0
		if ev.Image != nil {
			i = *ev.Image
		}
		return p == pass && (img == 0 || i == img) && ev.Step >= k
	}
}

// TestGenerateKilledResumesExactly kills real easel generate processes with SIGKILL after a
// checkpoint and resumes them (CPU): plain at two steps, CFG with a condition image, img2img with
// a mask, a batch of 3 stopped in its second image, and a hi-res second pass.
func TestGenerateKilledResumesExactly(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	cond := writePNG(t, dir, "cond.png", startPicture())
	start := writePNG(t, dir, "start.png", startPicture())
	mask := writePNG(t, dir, "mask.png", leftMask(64, 64))
	base := []string{"--model", model, "--prompt", "a lighthouse", "--size", "64x64", "--seed", "5", "--backend", "cpu"}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	t.Run("plain", func(t *testing.T) {
		checkKillAndResume(t, with("--steps", "4"), []string{"OUT.png"}, atStep(1, 0, 1))
		checkKillAndResume(t, with("--steps", "4"), []string{"OUT.png"}, atStep(3, 0, 1))
	})
	t.Run("cfg+image", func(t *testing.T) {
		// The condition image is moved away before the resume: the copy beside the checkpoint is used.
		checkKillAndResumeAfter(t, with("--steps", "3", "--cfg", "3", "--negative", "fog", "--image", cond), []string{"OUT.png"}, atStep(2, 0, 1),
			func() {
				if err := os.Rename(cond, cond+".moved"); err != nil {
					t.Fatal(err)
				}
			})
	})
	t.Run("img2img+mask", func(t *testing.T) {
		checkKillAndResume(t, with("--steps", "6", "--init", start, "--mask", mask, "--strength", "0.7"), []string{"OUT.png"}, atStep(2, 0, 1))
	})
	t.Run("batch", func(t *testing.T) {
		checkKillAndResume(t, with("--steps", "3", "--count", "3"), []string{"OUT-1.png", "OUT-2.png", "OUT-3.png"}, atStep(1, 2, 1))
	})
	t.Run("hires", func(t *testing.T) {
		checkKillAndResume(t, with("--steps", "2", "--hires", "1.5", "--hires-steps", "4", "--hires-strength", "0.75"), []string{"OUT.png"}, atStep(1, 0, 2))
	})
}

// TestEmuGenerateKilledResumesExactly is the CPU test's cases on the emulated Metal device: plain,
// CFG with a condition image, img2img with a mask, a batch of 3 stopped in its second image, and a
// hi-res second pass. The model file is the q8 one the Metal kernels read, so the denoiser runs on
// the device as well as the text encoder and the VAE (the f16 file's bf16 denoiser would decline
// to the CPU).
func TestEmuGenerateKilledResumesExactly(t *testing.T) {
	model := q8Model(t)
	dir := t.TempDir()
	cond := writePNG(t, dir, "cond.png", startPicture())
	start := writePNG(t, dir, "start.png", startPicture())
	mask := writePNG(t, dir, "mask.png", leftMask(64, 64))
	base := []string{"--model", model, "--prompt", "a lighthouse", "--size", "64x64", "--seed", "5", "--backend", "emulator"}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	t.Run("plain", func(t *testing.T) {
		checkKillAndResume(t, with("--steps", "3"), []string{"OUT.png"}, atStep(1, 0, 1))
	})
	t.Run("cfg+image", func(t *testing.T) {
		// The condition image is sized for --resolution 256 (256² pixels instead of the default
		// 1024²: at 1024² the emulator's vision tower, run once per prompt, and VAE encoder take
		// minutes). It is moved away before the resume: the copy beside the checkpoint is used.
		checkKillAndResumeAfter(t, with("--steps", "3", "--cfg", "3", "--negative", "fog", "--image", cond, "--resolution", "256"), []string{"OUT.png"}, atStep(2, 0, 1),
			func() {
				if err := os.Rename(cond, cond+".moved"); err != nil {
					t.Fatal(err)
				}
			})
	})
	t.Run("img2img+mask", func(t *testing.T) {
		checkKillAndResume(t, with("--steps", "4", "--init", start, "--mask", mask, "--strength", "0.75"), []string{"OUT.png"}, atStep(2, 0, 1))
	})
	t.Run("batch", func(t *testing.T) {
		checkKillAndResume(t, with("--steps", "2", "--count", "3"), []string{"OUT-1.png", "OUT-2.png", "OUT-3.png"}, atStep(1, 2, 1))
	})
	t.Run("hires", func(t *testing.T) {
		checkKillAndResume(t, with("--steps", "2", "--hires", "1.5", "--hires-steps", "2", "--hires-strength", "1"), []string{"OUT.png"}, atStep(1, 0, 2))
	})
}

// TestResumeRefusals: a checkpoint of another model file, of a newer format, a truncated one and
// a missing one are refused with exit 15 (ExitCheckpoint) and a sentence; the damaged file stays.
func TestResumeRefusals(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	args := []string{"--model", model, "--prompt", "a lighthouse", "--size", "64x64", "--steps", "2", "--out", filepath.Join(dir, "x.png")}
	js, _ := json.Marshal(checkpointRequest{Args: args})
	c := &checkpoint.Checkpoint{Model: checkpoint.Model{Path: "/elsewhere/other.cmf", Fingerprint: "0123456789abcdef"}, Request: js, Seed: 1,
		Pass: 1, Images: 1, Step: 1, Steps: 2, Sigmas: []float32{1, 0.5, 0}, Latents: make([]float32, 4*4*64)}
	other := filepath.Join(dir, "other.ckpt")
	if err := checkpoint.WriteFile(other, c); err != nil {
		t.Fatal(err)
	}
	b, _ := c.Marshal()
	truncated := filepath.Join(dir, "truncated.ckpt")
	os.WriteFile(truncated, b[:len(b)/2], 0o644)
	newer := filepath.Join(dir, "newer.ckpt")
	nb := append([]byte(nil), b...)
	nb[8] = checkpoint.Version + 1
	os.WriteFile(newer, nb, 0o644)
	for path, want := range map[string]string{
		other:                              "made with the model file /elsewhere/other.cmf",
		truncated:                          "kept there for inspection",
		newer:                              "update Easel",
		filepath.Join(dir, "missing.ckpt"): "cannot be read",
	} {
		code, _, stderr := run("generate", "--resume", path)
		if code != ExitCheckpoint || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, %q; want %d saying %q", filepath.Base(path), code, stderr, ExitCheckpoint, want)
		}
	}
	if _, err := os.Stat(truncated); err != nil {
		t.Errorf("the truncated checkpoint is gone: %v", err)
	}
}
