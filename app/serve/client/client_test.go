package client_test

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"testing"

	"easel/app/compose"
	"easel/app/jobs"
	"easel/app/preview"
	"easel/app/serve"
	"easel/app/serve/client"
	"easel/engine/convert"
	"easel/engine/pipeline"
	"easel/internal/tinymodel"
)

func TestMain(m *testing.M) {
	code := m.Run()
	tinymodel.RemoveAll()
	os.Exit(code)
}

// drain runs a generator with an events channel read to its end, returning the events.
func drain(t *testing.T, g jobs.Generator, ctx context.Context, req pipeline.Request) (*pipeline.Result, []pipeline.Event, error) {
	t.Helper()
	events := make(chan pipeline.Event, 16)
	var got []pipeline.Event
	done := make(chan struct{})
	go func() {
		for ev := range events {
			got = append(got, ev)
		}
		close(done)
	}()
	res, err := g.Run(ctx, req, events)
	<-done
	return res, got, err
}

// TestRemoteRenderEqualsLocal: a draft rendered on another machine's server through the client
// (the window's "Render on: host:port") is the image the local generator makes, bit for bit, with
// its seed, steps and CFG from the server's PNG, and live previews on the way.
func TestRemoteRenderEqualsLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16})
	remoteGen := &jobs.ModelGenerator{Path: model}
	defer remoteGen.Close()
	q := jobs.New(remoteGen, nil)
	defer q.Close()
	srv, err := serve.New(serve.Config{Queue: q, Model: model, Preview: preview.Neutral})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	d := compose.Draft{Prompt: "a blue boat", Negative: "fog", CFG: 2.5, Steps: 4, Size: compose.SizeExact, CustomW: 64, CustomH: 96, Model: model}
	req, err := d.Request(9)
	if err != nil {
		t.Fatal(err)
	}
	remote := &client.Generator{Addr: hs.Listener.Addr().String(), Poll: 1}
	got, events, err := drain(t, remote, context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	local := &jobs.ModelGenerator{Path: model}
	defer local.Close()
	want, _, err := drain(t, local, context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Image.Pix, want.Image.Pix) || got.Image.Rect != want.Image.Rect {
		t.Error("the remote image differs from the local one")
	}
	if got.Seed != 9 || got.Steps != 4 || got.CFG != 2.5 || got.Width != 64 || got.Height != 96 {
		t.Errorf("remote result settings: seed %d, %d steps, CFG %g, %dx%d", got.Seed, got.Steps, got.CFG, got.Width, got.Height)
	}
	steps, previews := 0, 0
	for _, ev := range events {
		if ev.Stage == pipeline.StageDenoising {
			steps++
			if ev.Preview != nil && ev.Preview.Image != nil {
				previews++
			}
		}
	}
	if steps == 0 || previews == 0 || events[len(events)-1].Stage != pipeline.StageDone {
		t.Errorf("%d step events, %d previews; last event %v", steps, previews, events[len(events)-1].Stage)
	}
}

// blocking holds its job until the test lets go, so the server can vanish under it.
type blocking struct{ started chan struct{} }

func (b blocking) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	defer close(events)
	close(b.started)
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestServerGoneMidJob: when the server goes away during a job, the client's error says so
// (ErrServerGone, naming the server and that the draft is kept), and a cancelled job is
// interrupted there.
func TestServerGoneMidJob(t *testing.T) {
	model := tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16})
	gen := blocking{started: make(chan struct{})}
	q := jobs.New(gen, nil)
	defer q.Close()
	srv, err := serve.New(serve.Config{Queue: q, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	remote := &client.Generator{Addr: hs.URL, Poll: 1}
	errc := make(chan error, 1)
	go func() {
		_, _, err := drain(t, remote, context.Background(), pipeline.Request{Prompt: "x", Width: 32, Height: 32, Steps: 2})
		errc <- err
	}()
	<-gen.started
	hs.CloseClientConnections()
	hs.Close()
	err = <-errc
	if !errors.Is(err, client.ErrServerGone) || !bytes.Contains([]byte(err.Error()), []byte("draft is kept")) {
		t.Errorf("error %v; want ErrServerGone saying the draft is kept", err)
	}
}
