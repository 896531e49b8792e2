package client_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"easel/app/serve/client"
	"easel/engine/pipeline"
	"easel/engine/sched"
)

// TestForeignServerBatchAndGrid: against an A1111 server that is not Easel's (it puts a grid of
// the batch first, writes no Easel settings and ignores easel_sigmas), the client still returns
// the batch's own images with the request's seeds, and says that the preset's grid was not used.
func TestForeignServerBatchAndGrid(t *testing.T) {
	pngOf := func(shade uint8) string {
		img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
		for i := range img.Pix {
			img.Pix[i] = shade
		}
		img.Set(0, 0, color.NRGBA{A: 255})
		var buf bytes.Buffer
		png.Encode(&buf, img)
		return base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	var sent map[string]any
	mux := http.NewServeMux()
	mux.HandleFunc("/sdapi/v1/txt2img", func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&sent)
		json.NewEncoder(w).Encode(map[string]any{"images": []string{pngOf(9), pngOf(10), pngOf(20)}, "info": `{"all_seeds": [3, 4]}`})
	})
	mux.HandleFunc("/sdapi/v1/progress", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) })
	hs := httptest.NewServer(mux)
	defer hs.Close()
	turbo := sched.TurboConfig()
	req := pipeline.Request{Prompt: "x", Width: 32, Height: 32, Seed: 3, Count: 2, Sigmas: []float64{1, 0.5}, Scheduler: &turbo}
	got, events, err := drain(t, &client.Generator{Addr: hs.URL, Poll: 1}, context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if sent["batch_size"] != 2.0 || sent["steps"] != 2.0 || sent["easel_sigmas"] == nil || sent["easel_scheduler"] == nil {
		t.Errorf("sent %v; want batch_size 2, steps 2 and the grid", sent)
	}
	if len(got.Batch) != 2 || got.Batch[0].Image.Pix[4] != 10 || got.Batch[1].Image.Pix[4] != 20 {
		t.Fatalf("got %d images; want the batch's 2 without the grid image", len(got.Batch))
	}
	if got.Batch[0].Seed != 3 || got.Batch[1].Seed != 4 {
		t.Errorf("seeds %d, %d; want 3, 4", got.Batch[0].Seed, got.Batch[1].Seed)
	}
	said := false
	for _, ev := range events {
		said = said || strings.Contains(ev.Notice, "did not use the LoRA preset's sigma grid")
	}
	if !said {
		t.Error("no notice that the server ignored the preset's grid")
	}
}
