package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"easel/app/studio"
)

// BenchmarkStudioSmallBatch: 20 images of 64×64 at 2 steps on the tiny model, as a local batch
// (`easel generate --count 20`, which opens the model each run) and through a loopback studio of
// one worker in this process (`easel generate --studio`; the worker's pipeline is open from a
// first image before the timing). The studio's cost per image is its own: publishing, the
// worker's pull, the batch's heartbeat check, progress, the result through the Object Store,
// the acknowledgement and the client's write. It reports both times and their ratio
// (studio/local) per run:
//
//	go test ./app/cli -run '^$' -bench BenchmarkStudioSmallBatch -benchtime 3x -count 1
func BenchmarkStudioSmallBatch(b *testing.B) {
	model := tinyCMF(b)
	h, err := studio.StartHub(studio.HubConfig{Listen: "127.0.0.1:0", Token: studioTestToken, Data: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	c, err := h.Connect(studio.RoleWorker)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx, stop := context.WithCancel(context.Background())
	finished := make(chan int, 1)
	go func() { finished <- joinAndRender(ctx, c, model, "cpu", "bench", true, io.Discard, io.Discard) }()
	defer func() { stop(); <-finished }()
	admin, err := h.Connect(studio.RoleClient)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	deadline := time.Now().Add(time.Minute)
	for joined := false; !joined; { // a bounded wait for the worker's status on the hub
		ws, err := admin.Workers(ctx)
		joined = err == nil && len(ws) == 1
		if time.Now().After(deadline) {
			b.Fatalf("the worker did not join within a minute (%v)", err)
		}
		select {
		case code := <-finished:
			b.Fatalf("the worker ended: exit %d", code)
		case <-time.After(20 * time.Millisecond):
		}
	}
	dir := b.TempDir()
	common := []string{"--model", model, "--prompt", "a lighthouse at dusk", "--size", "64x64", "--steps", "2", "--backend", "cpu", "--seed", "5"}
	studioRun := func(count int, out string) {
		args := append([]string{"generate", "--studio", h.URL(), "--token", studioTestToken, "--count", fmt.Sprint(count), "--out", filepath.Join(dir, out)}, common...)
		if code, _, stderr := run(args...); code != ExitOK {
			b.Fatalf("generate --studio: exit %d: %s", code, stderr)
		}
	}
	studioRun(1, "warm.png") // the worker opens its pipeline
	var local, remote time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if code, _, stderr := run(append([]string{"generate", "--count", "20", "--out", filepath.Join(dir, fmt.Sprintf("l%d.png", i))}, common...)...); code != ExitOK {
			b.Fatalf("local batch: exit %d: %s", code, stderr)
		}
		local += time.Since(start)
		start = time.Now()
		studioRun(20, fmt.Sprintf("s%d.png", i))
		remote += time.Since(start)
	}
	b.ReportMetric(local.Seconds()/float64(b.N), "local-s/batch")
	b.ReportMetric(remote.Seconds()/float64(b.N), "studio-s/batch")
	b.ReportMetric(remote.Seconds()/local.Seconds(), "studio/local")
}
