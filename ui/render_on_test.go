package ui

import (
	"bytes"
	"context"
	"easel/ui/recipe"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app/jobs"
	"easel/app/memplan"
	"easel/app/serve"
	"easel/engine/convert"
	"easel/engine/imageio"
	"easel/engine/pipeline"
	"easel/internal/golden"
)

// TestRenderOnAnotherMachine: with Settings → "Render on: 127.0.0.1:PORT" (a server with a token
// over the tiny model), Generate runs the job there: the window shows its progress, saves the
// image with its settings in history, and the image is the one this Mac makes from the same
// draft, bit for bit. The server's queue shows the job as an API job.
func TestRenderOnAnotherMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("converts and runs the tiny model")
	}
	model := tinyModelPath(t)
	remoteGen := &jobs.ModelGenerator{Path: model}
	t.Cleanup(func() { remoteGen.Close() })
	remoteQ := jobs.New(remoteGen, nil)
	t.Cleanup(remoteQ.Close)
	srv, err := serve.New(serve.Config{Queue: remoteQ, Model: model, Auth: serve.Auth{Token: "studio-token"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)

	local := &jobs.ModelGenerator{Path: model}
	t.Cleanup(func() { local.Close() })
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.Generator = local
		d.Settings.Model = model
		d.Settings.RenderOn, d.Settings.RenderToken = hs.Listener.Addr().String(), "studio-token"
		g, err := memplan.GeometryOf(model)
		if err != nil {
			t.Fatal(err)
		}
		d.Geometry = g
	})
	if h.s.router.Where() != hs.Listener.Addr().String() {
		t.Fatalf("the window renders on %q", h.s.router.Where())
	}
	h.s.options.SizeSelect.SetSelected(recipe.SizeCustomLabel)
	h.s.options.CustomW.SetText("256")
	h.s.options.CustomH.SetText("256")
	h.s.options.Steps.SetText("3")
	test.Type(h.s.prompt.Text, "a paper crane")
	h.s.model.SetRandomSeed(false)
	h.s.model.SetSeed(77)
	test.Tap(h.s.generateBtn)
	h.pump("the remote image saved", func() bool { return len(h.s.history.Entries) == 1 })

	e := h.s.history.Entries[0]
	if e.Settings == nil || e.Settings.Seed != 77 || e.Settings.Steps != 3 || e.Settings.Prompt != "a paper crane" {
		t.Fatalf("history entry settings %+v", e.Settings)
	}
	got, err := imageio.Load(e.Path)
	if err != nil {
		t.Fatal(err)
	}
	req, err := h.s.draftCopy().Request(77)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan pipeline.Event, 64)
	go func() {
		for range events {
		}
	}()
	want, err := local.Run(context.Background(), req, events)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Pix, want.Image.Pix) {
		t.Error("the image rendered on the server differs from this Mac's")
	}
	if js := remoteQ.Jobs(); len(js) != 1 || js[0].State != jobs.Done || !strings.HasPrefix(js[0].Origin, "API ") {
		t.Errorf("the server's queue: %+v", js)
	}
}

// TestShareThisMac: with "Share this Mac" on, the window serves the API on its own queue with a
// token it makes: a request without it is refused, one with it becomes a job in the window's
// queue, listed with its origin, and its image goes into the history with that origin; turning
// sharing off stops the server.
func TestShareThisMac(t *testing.T) {
	h := newHarness(t, 64e9)
	ns := h.s.deps.Settings
	ns.Model = tinyModelPath(t)
	ns.Share, ns.ShareAddr = true, "127.0.0.1:0"
	h.s.applyNetwork(ns)
	if h.s.remote.SharedOn() == "" {
		t.Fatalf("not sharing: %s", h.s.message.Text)
	}
	token := h.s.deps.Settings.ShareToken
	if len(token) < 16 {
		t.Fatalf("share token %q", token)
	}
	addr := "http://" + h.s.remote.SharedOn() + "/sdapi/v1/txt2img"
	resp, err := http.Post(addr, "application/json", strings.NewReader(`{"width":32,"height":32,"steps":2}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("without the token: %d", resp.StatusCode)
	}
	answered := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", addr, strings.NewReader(`{"prompt":"from a script","width":32,"height":32,"steps":2}`))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	h.pump("the API job in the window's queue", func() bool {
		for _, j := range h.s.queue.Jobs() {
			if strings.HasPrefix(j.Origin, "API ") {
				return true
			}
		}
		return false
	})
	h.pump("the API job listed with its origin", func() bool { return strings.Contains(queueText(h), "from API 127.0.0.1") })
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	if code := pumpUntil(h, "the API answer", answered); code != 200 {
		t.Errorf("with the token: %d", code)
	}
	h.pump("the API image in the window's history", func() bool { return len(h.s.history.Entries) == 1 })
	if e := h.s.history.Entries[0]; e.Settings == nil || !strings.HasPrefix(e.Settings.Origin, "API ") || e.Settings.Prompt != "from a script" {
		t.Errorf("history entry of the API job: %+v", e.Settings)
	} else if m := h.s.actions.Menu(e); !strings.HasPrefix(m.Items[0].Label, "Made for API ") {
		t.Errorf("its menu starts with %q", m.Items[0].Label)
	}
	ns.Share = false
	h.s.applyNetwork(ns)
	if h.s.remote.SharedOn() != "" {
		t.Error("still sharing after Share was turned off")
	}
}

// tinyModelPath converts the tiny reference model into the test's temporary folder.
func tinyModelPath(t *testing.T) string {
	t.Helper()
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "tiny.cmf")
	if _, err := convert.Convert(context.Background(), snap, model, convert.Options{Profile: convert.ProfileF16}); err != nil {
		t.Fatal(err)
	}
	return model
}

// queueText is every label of the queue panel, one per line.
func queueText(h *harness) string {
	var b strings.Builder
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *widget.Label:
			b.WriteString(v.Text + "\n")
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		}
	}
	walk(h.s.queueList.Rows)
	return b.String()
}

// holdingGen holds a job until it is cancelled (a server that goes away under it).
type holdingGen struct{ started chan struct{} }

func (g holdingGen) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	defer close(events)
	g.started <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestRenderServerGoneMidJob: when the machine the window renders on goes away during a job, the
// window says so (naming it, saying the draft is kept), the draft is as it was, and the next
// Generate can run here.
func TestRenderServerGoneMidJob(t *testing.T) {
	model := tinyModelPath(t)
	gen := holdingGen{started: make(chan struct{}, 1)}
	remoteQ := jobs.New(gen, nil)
	t.Cleanup(remoteQ.Close)
	srv, err := serve.New(serve.Config{Queue: remoteQ, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv.Handler())
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.Settings.RenderOn = hs.Listener.Addr().String()
	})
	test.Type(h.s.prompt.Text, "a lantern")
	test.Tap(h.s.generateBtn)
	<-gen.started
	hs.CloseClientConnections()
	hs.Close()
	h.pump("the window to say the server went away", func() bool {
		return strings.Contains(h.s.message.Text, "stopped answering") && strings.Contains(h.s.message.Text, "draft is kept")
	})
	if h.s.draft().Prompt != "a lantern" || h.s.queue.Pending() != 0 {
		t.Errorf("after the server went away: prompt %q, %d jobs pending", h.s.draft().Prompt, h.s.queue.Pending())
	}
	if strings.Contains(h.s.message.Text, "<nil>") || h.s.remote.RenderHere() == nil {
		t.Fatalf("no offer to render here (notice %q)", h.s.message.Text)
	}
	// Render here: the same job runs on this machine, Render on is off.
	test.Tap(findButton(t, h.w.Canvas().Overlays().Top(), "Render here"))
	req := <-h.gen.started
	if h.s.router.Where() != "" || h.s.network.Visible() || req.Prompt != "a lantern" {
		t.Errorf("after Render here: rendering on %q, indicator %v, prompt %q", h.s.router.Where(), h.s.network.Visible(), req.Prompt)
	}
}
