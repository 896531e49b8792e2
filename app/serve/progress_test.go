package serve_test

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"strings"
	"testing"

	"easel/app/jobs"
	"easel/app/serve"
)

// progressBody is A1111's /progress answer.
type progressBody struct {
	Progress    float64 `json:"progress"`
	ETARelative float64 `json:"eta_relative"`
	State       struct {
		Interrupted   bool   `json:"interrupted"`
		Skipped       bool   `json:"skipped"`
		Job           string `json:"job"`
		JobCount      int    `json:"job_count"`
		JobNo         int    `json:"job_no"`
		SamplingStep  int    `json:"sampling_step"`
		SamplingSteps int    `json:"sampling_steps"`
	} `json:"state"`
	CurrentImage *string `json:"current_image"`
	TextInfo     *string `json:"textinfo"`
}

// TestProgressRisesThenInterruptStops: during a longer job (two images of six steps, each step
// released by the test), /progress reports rising progress with a live preview PNG (and none
// with skip_current_image); /interrupt stops the request, which answers with the images made so
// far, the one being made as far as it got, and says it was interrupted; the next request runs.
func TestProgressRisesThenInterruptStops(t *testing.T) {
	gen := &fakeGen{gate: make(chan struct{})}
	ts := newTestServer(t, gen, serve.Config{Preview: nil})
	var idle progressBody
	if call(t, "GET", ts.URL+"/sdapi/v1/progress", nil, &idle); idle.Progress != 0 || idle.State.JobCount != 0 || idle.CurrentImage != nil {
		t.Errorf("idle progress %+v", idle)
	}
	answered := make(chan genResponse, 1)
	go func() {
		var resp genResponse
		call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "slow", "width": 32, "height": 32, "steps": 6, "n_iter": 2}, &resp)
		answered <- resp
	}()
	last, previews := -1.0, 0
	for step := 1; step <= 8; step++ { // all 6 of the first image, 2 of the second
		gen.gate <- struct{}{}
		var p progressBody
		waitFor(t, "step reported", func() bool {
			call(t, "GET", ts.URL+"/sdapi/v1/progress", nil, &p)
			want := step
			if step > 6 {
				want = step - 6
			}
			job := (step - 1) / 6
			// The last step of an image may already show the next image starting.
			return (p.State.SamplingStep >= want && p.State.JobNo == job) || p.State.JobNo > job
		})
		if p.Progress < last || p.Progress >= 1 {
			t.Errorf("step %d: progress %g after %g", step, p.Progress, last)
		}
		last = p.Progress
		if p.State.JobCount != 2 || (p.State.SamplingStep > 0 && p.State.SamplingSteps != 6) || p.TextInfo == nil {
			t.Errorf("step %d: state %+v", step, p.State)
		}
		if p.CurrentImage == nil && p.State.SamplingStep > 0 {
			t.Fatalf("step %d: no current_image", step)
		}
		if p.CurrentImage != nil {
			previews++
			data, err := base64.StdEncoding.DecodeString(*p.CurrentImage)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := png.Decode(bytes.NewReader(data)); err != nil {
				t.Fatalf("current_image is not a PNG: %v", err)
			}
		}
		var noImg progressBody
		call(t, "GET", ts.URL+"/sdapi/v1/progress?skip_current_image=true", nil, &noImg)
		if noImg.CurrentImage != nil {
			t.Error("skip_current_image=true still sent the image")
		}
	}
	if previews < 6 {
		t.Errorf("%d previews over 8 steps", previews)
	}
	if code := call(t, "POST", ts.URL+"/sdapi/v1/interrupt", nil, nil); code != 200 {
		t.Fatalf("interrupt: %d", code)
	}
	// As A1111: the image being made comes back as far as it got (step 2 of 6), marked.
	resp := <-answered
	if len(resp.Images) != 2 || resp.info(t)["interrupted"] != true || !strings.Contains(resp.Info, "interrupted at step 2 of 6") {
		t.Errorf("after interrupt: %d images, info %.400s", len(resp.Images), resp.Info)
	}
	waitFor(t, "the queue to settle", func() bool { return ts.Queue.Pending() == 0 })
	cancelled := 0
	for _, j := range ts.Queue.Jobs() {
		if j.State == jobs.Cancelled {
			cancelled++
		}
		if !strings.HasPrefix(j.Origin, "API ") {
			t.Errorf("job %d origin %q", j.ID, j.Origin)
		}
	}
	if cancelled != 0 {
		t.Errorf("%d cancelled jobs, want 0 (the interrupted one finishes with its image)", cancelled)
	}

	gen.gate = nil // the next request runs at once
	var next genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"width": 32, "height": 32, "steps": 2}, &next); code != 200 || len(next.Images) != 1 {
		t.Errorf("the request after the interrupt: %d, %d images", code, len(next.Images))
	}
}

// TestSkipDropsOneImage: /skip drops the image being made; the batch goes on.
func TestSkipDropsOneImage(t *testing.T) {
	gen := &fakeGen{gate: make(chan struct{})}
	ts := newTestServer(t, gen, serve.Config{})
	answered := make(chan genResponse, 1)
	go func() {
		var resp genResponse
		call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"width": 32, "height": 32, "steps": 2, "batch_size": 2}, &resp)
		answered <- resp
	}()
	gen.gate <- struct{}{}
	waitFor(t, "the first step", func() bool {
		var p progressBody
		call(t, "GET", ts.URL+"/sdapi/v1/progress", nil, &p)
		return p.State.SamplingStep == 1
	})
	call(t, "POST", ts.URL+"/sdapi/v1/skip", nil, nil)
	gen.gate <- struct{}{}
	gen.gate <- struct{}{}
	resp := <-answered
	if len(resp.Images) != 1 || !strings.Contains(resp.Info, "skipped") {
		t.Errorf("after skip: %d images, info %.300s", len(resp.Images), resp.Info)
	}
}
