package serve_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"easel/app/jobs"
	"easel/app/serve"
	"easel/engine/convert"
	"easel/engine/pipeline"
	"easel/internal/tinymodel"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "easel-serve-test-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	os.Setenv("HOME", dir)
	code := m.Run()
	tinymodel.RemoveAll()
	os.RemoveAll(dir)
	os.Exit(code)
}

// tinyModel is the tiny reference model as a .cmf (converted once per test binary).
func tinyModel(t testing.TB) string {
	return tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16})
}

// fakeGen makes a flat image whose colour comes from the seed, sending a stage event, one event
// per step with a preview, and the done event. With gate set, each step waits for a value on it
// (or for the job to be cancelled). It records the requests it ran.
type fakeGen struct {
	gate  chan struct{}
	pause time.Duration // work per step, without a gate

	mu   sync.Mutex
	reqs []pipeline.Request
}

func (g *fakeGen) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	defer close(events)
	g.mu.Lock()
	g.reqs = append(g.reqs, req)
	g.mu.Unlock()
	steps := req.Steps
	if steps == 0 {
		steps = 4
	}
	w, h := req.Width, req.Height
	events <- pipeline.Event{Stage: pipeline.StageEncodingPrompt}
	done := steps
	for i := 1; i <= steps; i++ {
		if i > 1 && req.Stop != nil && isClosed(req.Stop) { // as the pipeline: the image as far as it got
			done = i - 1
			break
		}
		if g.gate != nil {
			select {
			case <-g.gate:
			case <-req.Stop:
				done = i - 1
			case <-ctx.Done():
				return nil, fmt.Errorf("fake: %w", ctx.Err())
			}
			if done < steps {
				break
			}
		} else if g.pause > 0 {
			select {
			case <-time.After(g.pause):
			case <-ctx.Done():
				return nil, fmt.Errorf("fake: %w", ctx.Err())
			}
		} else if ctx.Err() != nil {
			return nil, fmt.Errorf("fake: %w", ctx.Err())
		}
		pv := image.NewNRGBA(image.Rect(0, 0, 4, 4))
		for p := range pv.Pix {
			pv.Pix[p] = byte(i * 40)
		}
		events <- pipeline.Event{Stage: pipeline.StageDenoising, Step: i, Steps: steps, ETA: time.Duration(steps-i) * time.Second,
			Preview: &pipeline.Preview{H: 1, W: 1, X0: make([]float32, 64), Image: pv}}
	}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for p := 0; p < len(img.Pix); p += 4 {
		img.Pix[p], img.Pix[p+1], img.Pix[p+2], img.Pix[p+3] = byte(req.Seed), byte(req.Seed>>8), byte(len(req.Prompt)), 255
	}
	events <- pipeline.Event{Stage: pipeline.StageDone, Step: steps, Steps: steps}
	cfg := req.CFG
	if cfg == 0 {
		cfg = 1
	}
	return &pipeline.Result{Image: img, Width: w, Height: h, Steps: steps, StepsRun: steps, StepsDone: done, Interrupted: done < steps,
		CFG: cfg, Seed: req.Seed, Resolution: req.Resolution}, nil
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func (g *fakeGen) requests() []pipeline.Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]pipeline.Request(nil), g.reqs...)
}

// testServer is a server over its own queue on httptest.
type testServer struct {
	*serve.Server
	URL   string
	Queue *jobs.Queue
	http  *httptest.Server
}

// newTestServer serves cfg (Model defaults to the tiny model) with gen behind its own queue.
func newTestServer(t *testing.T, gen jobs.Generator, cfg serve.Config) *testServer {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = tinyModel(t)
	}
	q := jobs.New(gen, nil)
	cfg.Queue = q
	s, err := serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		s.Close()
		hs.Close()
		q.Close()
	})
	return &testServer{Server: s, URL: hs.URL, Queue: q, http: hs}
}

// call sends a request and decodes the JSON answer into out (when not nil); it returns the status.
func call(t testing.TB, method, url string, body any, out any) int {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = bytes.NewReader([]byte(b))
	case []byte:
		r = bytes.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %d, body %.300q is not the JSON expected: %v", method, url, resp.StatusCode, data, err)
		}
	}
	return resp.StatusCode
}

// genResponse is A1111's txt2img/img2img answer.
type genResponse struct {
	Images     []string       `json:"images"`
	Parameters map[string]any `json:"parameters"`
	Info       string         `json:"info"`
}

// info decodes the `info` string.
func (g genResponse) info(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(g.Info), &m); err != nil {
		t.Fatalf("info %.200q is not a JSON object in a string: %v", g.Info, err)
	}
	return m
}

// decodeImage decodes a base64 PNG of an answer.
func decodeImage(t testing.TB, b64 string) (*image.NRGBA, []byte) {
	t.Helper()
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return toNRGBA(img), data
}

func toNRGBA(img image.Image) *image.NRGBA {
	if n, ok := img.(*image.NRGBA); ok {
		return n
	}
	b := img.Bounds()
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			out.Set(x, y, color.NRGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)))
		}
	}
	return out
}

// pngBase64 encodes an image as an A1111 client sends it.
func pngBase64(t testing.TB, img image.Image) string {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// waitFor polls cond (bounded by the test's deadline) until it holds.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func pngB64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// fileSHA256 is a file's SHA-256 in hex, computed here for comparison.
func fileSHA256(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
