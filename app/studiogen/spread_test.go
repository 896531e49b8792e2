package studiogen

import (
	"context"
	"testing"
	"time"

	"easel/app"
	"easel/app/studio"
	"easel/engine/pipeline"
)

const testToken = "studiogen-test-token-0123456789"

// A spread request that is answered before its images are made (interrupted, or its client left)
// takes them off the hub's queue when released: the one a Mac holds and the ones still waiting.
func TestSpreadReleaseTakesWaitingImagesOffTheQueue(t *testing.T) {
	h, err := studio.StartHub(studio.HubConfig{Listen: "127.0.0.1:0", Token: testToken, Data: t.TempDir(), AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	fp := studio.Fingerprint{Easel: app.Version, Model: "m", Kind: studio.KindPipeline}
	held := make(chan struct{}, 3)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := studio.Dial(ctx, h.URL(), studio.DialOptions{Role: studio.RoleWorker, Token: testToken, Name: "mini"})
	if err != nil {
		t.Fatal(err)
	}
	w := &studio.Worker{Name: "mini", Model: "m.cmf", Fingerprint: fp, FetchWait: time.Second,
		Renderer: studio.RenderFunc(func(ctx context.Context, _ *studio.Job, _ studio.Inputs, _ func(studio.Step)) ([]byte, error) {
			held <- struct{}{}
			<-ctx.Done() // holds its image until it leaves
			return nil, ctx.Err()
		})}
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx, c) }()
	t.Cleanup(func() { cancel(); <-done; c.Close() })

	g, err := New(h.URL(), testToken, "", fp.Model, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	for deadline := time.Now().Add(30 * time.Second); ; { // bounded: until the Mac is on the hub
		if ws, _ := g.Conn().Workers(ctx); len(ws) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker did not join within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	reqs := make([]pipeline.Request, 3)
	for i := range reqs {
		reqs[i] = pipeline.Request{Prompt: "p", Width: 32, Height: 32, Steps: 2, Seed: uint64(5 + i), Stop: make(chan struct{})}
	}
	release := g.Spread(reqs)
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("no image was taken within 30 s")
	}
	stream, err := g.Conn().JS.Stream(ctx, studio.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; { // bounded: until all three are on the hub
		info, err := stream.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue holds %d images; want the 3 sent at once", info.State.Msgs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if g.spreadSlot(reqs[2]) == nil {
		t.Fatal("the third image is not waiting for its queue job")
	}
	release()
	if info, err := stream.Info(ctx); err != nil || info.State.Msgs != 0 {
		t.Errorf("after release the queue holds %v images (%v); want none", info.State.Msgs, err)
	}
	if g.spreadSlot(reqs[2]) != nil {
		t.Error("a released image is still known")
	}
}
