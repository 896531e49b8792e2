package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"easel/app"
	"easel/app/jobs"
	"easel/app/serve"
	"easel/app/settings"
	"easel/app/studio"
	"easel/app/studiogen"
	"easel/engine/pipeline"
)

// spreadBarrier holds each worker's render until n images are in flight at once, and records
// which worker took which image. Served one by one, the second image would never be taken while
// the first waits, and the barrier fails the render with a message saying so.
type spreadBarrier struct {
	n    int
	mu   sync.Mutex
	who  map[int]string
	all  chan struct{}
	took int
}

func (b *spreadBarrier) wrap(name string, r studio.Renderer) studio.Renderer {
	return studio.RenderFunc(func(ctx context.Context, job *studio.Job, inputs studio.Inputs, progress func(studio.Step)) ([]byte, error) {
		b.mu.Lock()
		b.who[job.Index] = name
		if b.took++; b.took == b.n {
			close(b.all)
		}
		b.mu.Unlock()
		select {
		case <-b.all:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Minute):
			b.mu.Lock()
			defer b.mu.Unlock()
			return nil, fmt.Errorf("only %d of %d images were in flight at once: the batch was not spread", b.took, b.n)
		}
		return r.Render(ctx, job, inputs, progress)
	})
}

// txt2imgImages posts a txt2img request and returns its images' pixels and its info.
func txt2imgImages(t *testing.T, url string, body map[string]any) ([]*image.NRGBA, map[string]any) {
	t.Helper()
	js, _ := json.Marshal(body)
	resp, err := http.Post(url+"/sdapi/v1/txt2img", "application/json", bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Images []string `json:"images"`
		Info   string   `json:"info"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("txt2img: status %d, %v", resp.StatusCode, err)
	}
	var imgs []*image.NRGBA
	for i, s := range out.Images {
		data, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		im, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("image %d: %v", i+1, err)
		}
		n := image.NewNRGBA(im.Bounds())
		draw.Draw(n, n.Bounds(), im, im.Bounds().Min, draw.Src)
		imgs = append(imgs, n)
	}
	var info map[string]any
	json.Unmarshal([]byte(out.Info), &info)
	return imgs, info
}

// `easel serve --studio` spreads a batch: a batch_size 3 request over 3 workers (in this process,
// on a loopback hub, each with the real renderer) has every worker render one image at the same
// time, and the images equal those of a local server's same request.
func TestStudioServeSpreadsBatchOverWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("renders tiny images")
	}
	model := tinyCMF(t)
	m, f := openModel(model)
	if f != nil {
		t.Fatal(f.err)
	}
	fp := studio.Fingerprint{Easel: app.Version, Model: modelFingerprint(m), Kind: studio.KindPipeline}
	m.Close()
	h, err := studio.StartHub(studio.HubConfig{Listen: "127.0.0.1:0", Token: studioTestToken, Data: t.TempDir(), AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	const n = 3
	barrier := &spreadBarrier{n: n, who: map[int]string{}, all: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("mac-%d", i)
		r, fl := newStudioRenderer(model, string(settings.BackendCPU))
		if fl != nil {
			t.Fatal(fl.err)
		}
		t.Cleanup(r.Close)
		c, err := studio.Dial(ctx, h.URL(), studio.DialOptions{Role: studio.RoleWorker, Token: studioTestToken, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		w := &studio.Worker{Name: name, Model: "tiny.cmf", Fingerprint: fp, Renderer: barrier.wrap(name, r), FetchWait: time.Second}
		wg.Add(1)
		go func() { defer wg.Done(); w.Run(ctx, c) }()
	}
	sg, err := studiogen.New(h.URL(), studioTestToken, "", fp.Model, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sg.Close)
	// bounded wait until the three have told the hub they are there (state the hub holds)
	for deadline := time.Now().Add(30 * time.Second); ; {
		ws, _ := sg.Conn().Workers(ctx)
		if len(ws) == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d workers joined within 30 s", len(ws), n)
		}
		time.Sleep(20 * time.Millisecond)
	}

	var lmu sync.Mutex
	lines := map[jobs.ID]string{} // each queue job's last status line: where its image was made
	server := func(gen jobs.Generator, spread func([]pipeline.Request) func()) string {
		q := jobs.New(gen, func(u jobs.Update) {
			if u.Status != nil && u.Status.Line != "" {
				lmu.Lock()
				lines[u.Job.ID] = u.Status.Line
				lmu.Unlock()
			}
		})
		s, err := serve.New(serve.Config{Queue: q, Model: model, Backend: settings.BackendCPU, Spread: spread})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s.Handler())
		t.Cleanup(func() { s.Close(); hs.Close(); q.Close() })
		return hs.URL
	}
	body := map[string]any{"prompt": "a lighthouse", "width": 32, "height": 32, "steps": 2, "seed": 11, "batch_size": n}
	got, info := txt2imgImages(t, server(sg, sg.Spread), body)
	lmu.Lock()
	made := map[string]bool{}
	for id, l := range lines {
		w, ok := strings.CutPrefix(l, "Studio: done on ")
		if !ok {
			t.Errorf("job %d's last status line %q does not say which Mac made its image", id, l)
		}
		made[w] = true
	}
	lmu.Unlock()
	if len(lines) != n || len(made) != n {
		t.Errorf("the queue rows said %v; want each of %d jobs made on its own Mac", lines, n)
	}
	local := &jobs.ModelGenerator{Path: model, Backend: settings.BackendCPU}
	t.Cleanup(func() { local.Close() })
	want, _ := txt2imgImages(t, server(local, nil), body)

	if len(got) != n || len(want) != n {
		t.Fatalf("%d images from the studio, %d local; want %d", len(got), len(want), n)
	}
	if seeds, _ := json.Marshal(info["all_seeds"]); string(seeds) != "[11,12,13]" {
		t.Errorf("all_seeds %s, want [11,12,13]", seeds)
	}
	for i := range n {
		if !bytes.Equal(got[i].Pix, want[i].Pix) {
			t.Errorf("image %d differs from the local server's", i+1)
		}
	}
	barrier.mu.Lock()
	defer barrier.mu.Unlock()
	byWorker := map[string][]int{}
	for i, w := range barrier.who {
		byWorker[w] = append(byWorker[w], i+1)
	}
	if len(byWorker) != n {
		var s []string
		for w, is := range byWorker {
			s = append(s, fmt.Sprintf("%s: %v", w, is))
		}
		t.Errorf("the workers rendered %s; want each of the %d one image", strings.Join(s, ", "), n)
	}
}
