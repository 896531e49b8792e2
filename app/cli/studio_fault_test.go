package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"easel/app/imagefile"
	"easel/app/studio"
)

// generateLive runs `easel generate` in this process and hands each --json line to on as it
// comes; the returned channel gives the exit code.
func generateLive(args []string, on func(map[string]any)) (<-chan int, *bytes.Buffer) {
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := Run(args, pw, &stderr)
		pw.Close()
		done <- code
	}()
	go func() {
		s := bufio.NewScanner(pr)
		for s.Scan() {
			var ev map[string]any
			if json.Unmarshal(s.Bytes(), &ev) == nil {
				on(ev)
			}
		}
		io.Copy(io.Discard, pr)
	}()
	return done, &stderr
}

// A worker stopped (SIGSTOP: a Mac asleep) holding a job past the ack wait loses it to another;
// SIGCONTed, it finishes and delivers a late copy, which it calls late and the client drops: the
// file already written is not rewritten. mac-1 stops itself as it announces its first job
// (onFirstTaken), before rendering it: a SIGSTOP sent on reading that line could land after
// the image was stored, and the copy would then rightly be the first.
func TestStudioSleepingWorkerLateResultIsDropped(t *testing.T) {
	if testing.Short() {
		t.Skip("renders tiny images in subprocesses")
	}
	model := tinyCMF(t)
	url, workers := startStudio(t, model, 2*time.Second, 2, stopWhenTaken)
	asleep := make(chan studio.WorkerEvent, 1)
	late := make(chan studio.WorkerEvent, 1) // mac-1's word that its copy of the image is out
	go func() {
		for e := range workers[0].events {
			if e.Kind == "taken" { // mac-1 is stopped
				asleep <- e
				break
			}
		}
		for e := range workers[0].events {
			if e.Kind == "late" || e.Kind == "finished" {
				select {
				case late <- e:
				default:
				}
			}
		}
	}()
	dir := t.TempDir()
	type seen struct {
		ev   map[string]any
		data []byte
		mod  time.Time
	}
	events := make(chan map[string]any, 256)
	done, stderr := generateLive([]string{"generate", "--studio", url, "--token", studioTestToken, "--model", model,
		"--prompt", "a lighthouse", "--size", "32x32", "--steps", "2", "--seed", "40", "--count", "24",
		"--out", filepath.Join(dir, "b.png"), "--json"}, func(ev map[string]any) { events <- ev })
	var k studio.WorkerEvent
	saved := map[int]seen{}
	duplicate := false
	limit := time.After(3 * time.Minute)
	for code := -1; code < 0; {
		select {
		case c := <-done:
			code = c
			if c != ExitOK {
				t.Fatalf("generate --studio: exit %d: %s", c, stderr)
			}
		case k = <-asleep:
			if _, ok := saved[k.Index+1]; ok {
				workers[0].cmd.Process.Signal(syscall.SIGCONT) // wakes after its job went elsewhere
			}
		case ev := <-events:
			i := int(ev["image"].(float64))
			switch {
			case ev["stage"] == "saved":
				path := ev["path"].(string)
				data, err := os.ReadFile(path)
				st, err2 := os.Stat(path)
				if err != nil || err2 != nil {
					t.Fatalf("saved %s: %v %v", path, err, err2)
				}
				if _, dup := saved[i]; dup {
					t.Errorf("image %d saved twice", i)
				}
				saved[i] = seen{ev, data, st.ModTime()}
				if k.Kind != "" && i == k.Index+1 {
					workers[0].cmd.Process.Signal(syscall.SIGCONT) // wakes after its job went elsewhere
				}
			case ev["event"] == studio.EventDuplicate:
				if i != k.Index+1 || ev["worker"] != "mac-1" || ev["attempt"].(float64) != 1 {
					t.Errorf("duplicate event %v, want image %d's attempt 1 from mac-1", ev, k.Index+1)
				}
				duplicate = true
			}
		case <-limit:
			t.Fatal("generate --studio did not finish within 3 minutes")
		}
	}
	drain := true
	for drain { // the events printed before the exit
		select {
		case ev := <-events:
			if ev["event"] == studio.EventDuplicate {
				duplicate = true
			}
		default:
			drain = false
		}
	}
	if k.Kind == "" {
		t.Fatal("mac-1 never took a job")
	}
	if len(saved) != 24 {
		t.Fatalf("%d images saved, want 24", len(saved))
	}
	s := saved[k.Index+1]
	if s.ev["attempt"].(float64) != 2 || s.ev["worker"] != "mac-2" {
		t.Errorf("the sleeping Mac's image %d: %v, want attempt 2 by mac-2", k.Index+1, s.ev)
	}
	// mac-1 woke when image k+1 was saved by mac-2. Its copy comes back either while the batch
	// still runs, and the client reports it dropped, or, when image k+1 was the batch's last,
	// after the client is done. Either way no file is written again: checked below, once mac-1
	// has said its copy is out.
	// mac-1 calls its copy late, not finished, either way
	select {
	case e := <-late:
		if e.Kind != "late" || e.Index != k.Index || e.Attempt != 1 {
			t.Errorf("mac-1's copy: %+v, want image %d's attempt 1 said late", e, k.Index+1)
		}
	case <-time.After(time.Minute):
		t.Fatalf("mac-1's copy of image %d was neither reported dropped nor sent after the batch ended (duplicate reported: %v)", k.Index+1, duplicate)
	}
	for i, s := range saved { // nothing rewritten after it was saved
		data, _ := os.ReadFile(s.ev["path"].(string))
		st, _ := os.Stat(s.ev["path"].(string))
		if !bytes.Equal(data, s.data) || !st.ModTime().Equal(s.mod) {
			t.Errorf("image %d was rewritten after it was saved", i)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 24 {
		t.Errorf("%d files, want 24", len(entries))
	}
}

// A worker told to leave (SIGTERM: quit, or the Mac going to sleep) hands its job back at once:
// the hub's ack wait is 10 minutes here, so only the hand-back (Nak) can bring the image to the
// other worker as attempt 2 before the test's bound. mac-1 leaves as it announces its first job
// (onFirstTaken), before rendering it: a SIGTERM sent on reading that line could come after the
// image was stored, and a finished image is delivered.
func TestStudioLeavingWorkerHandsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("renders tiny images in subprocesses")
	}
	model := tinyCMF(t)
	url, workers := startStudio(t, model, 10*time.Minute, 2, leaveWhenTaken)
	leaving := make(chan studio.WorkerEvent, 1)
	go func() {
		for e := range workers[0].events {
			if e.Kind == "taken" { // mac-1 is leaving
				leaving <- e
				break
			}
		}
		for range workers[0].events {
		}
	}()
	dir := t.TempDir()
	var got []map[string]any
	events := make(chan map[string]any, 256)
	done, stderr := generateLive([]string{"generate", "--studio", url, "--token", studioTestToken, "--model", model,
		"--prompt", "a lighthouse", "--size", "32x32", "--steps", "2", "--seed", "3", "--count", "6",
		"--out", filepath.Join(dir, "b.png"), "--json"}, func(ev map[string]any) { events <- ev })
	limit := time.After(2 * time.Minute)
	for code := -1; code < 0; {
		select {
		case code = <-done:
			if code != ExitOK {
				t.Fatalf("generate --studio: exit %d: %s", code, stderr)
			}
		case ev := <-events:
			got = append(got, ev)
		case <-limit:
			t.Fatal("the batch did not finish within 2 minutes (the ack wait is 10)")
		}
	}
	for drain := true; drain; {
		select {
		case ev := <-events:
			got = append(got, ev)
		default:
			drain = false
		}
	}
	k := <-leaving
	want := float64(k.Index + 1)
	handed, saved := false, false
	for _, ev := range got {
		if ev["image"] != want {
			continue
		}
		if ev["event"] == studio.EventHandedBack && ev["worker"] == "mac-1" {
			handed = true
		}
		if ev["stage"] == "saved" && ev["worker"] == "mac-2" && ev["attempt"].(float64) == 2 {
			saved = true
		}
	}
	if !handed || !saved {
		t.Fatalf("image %d: handed back by mac-1 %v, saved by mac-2 as attempt 2 %v; events %v", k.Index+1, handed, saved, got)
	}
	if err := workers[0].cmd.Wait(); err != nil {
		t.Errorf("the leaving worker exited with %v, want a clean exit", err)
	}
}

// Condition image, start image, mask and LoRA travel through the hub by digest: a batch of 2 over
// the studio equals the local batch with the same files, pixel for pixel.
func TestStudioFilesTravelByDigest(t *testing.T) {
	if testing.Short() {
		t.Skip("renders tiny images in a subprocess")
	}
	model := tinyCMF(t)
	url, _ := startStudio(t, model, time.Minute, 1)
	in := t.TempDir()
	cond := writePNG(t, in, "cond.png", startPicture())
	start := writePNG(t, in, "start.png", startPicture())
	mask := writePNG(t, in, "mask.png", leftMask(64, 64))
	lora, _ := writeRandomLoRA(t, in)
	dir := t.TempDir()
	common := []string{"--model", model, "--prompt", "a lighthouse", "--image", cond, "--init", start, "--mask", mask,
		"--lora", lora + ":0.7", "--steps", "2", "--seed", "9", "--count", "2", "--backend", "cpu", "--json"}
	code, stdout, stderr := run(append([]string{"generate", "--studio", url, "--token", studioTestToken, "--out", filepath.Join(dir, "s.png")}, common...)...)
	if code != ExitOK {
		t.Fatalf("generate --studio: exit %d: %s", code, stderr)
	}
	saved := 0
	for _, ev := range jsonLines(t, stdout) {
		if ev["stage"] == "saved" {
			saved++
		}
	}
	if code, _, stderr := run(append([]string{"generate", "--out", filepath.Join(dir, "l.png")}, common...)...); code != ExitOK {
		t.Fatalf("local: exit %d: %s", code, stderr)
	}
	if saved != 2 {
		t.Fatalf("%d images saved, want 2", saved)
	}
	for i := 1; i <= 2; i++ {
		s := pixelsOf(t, filepath.Join(dir, fmt.Sprintf("s-%d.png", i)))
		l := pixelsOf(t, filepath.Join(dir, fmt.Sprintf("l-%d.png", i)))
		if !bytes.Equal(s, l) {
			t.Errorf("image %d: the studio's pixels differ from the local render's", i)
		}
	}
	md, err := imagefile.ReadFile(filepath.Join(dir, "s-1.png"))
	if err != nil || md.Settings == nil || len(md.Settings.LoRAs) != 1 || md.Settings.Init == nil || len(md.Settings.Images) != 1 {
		t.Fatalf("the studio image's settings: %v %+v", err, md)
	}
	if md.Settings.LoRAs[0].Name != "style.safetensors" && md.Settings.LoRAs[0].Name != "style" {
		t.Errorf("the LoRA is recorded as %q, want the file's own name", md.Settings.LoRAs[0].Name)
	}
}
