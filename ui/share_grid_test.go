package ui

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"easel/engine/cmf"
	"easel/engine/ml/cpu"
	"easel/engine/pipeline"

	"easel/ui/canvasarea"
)

// TestShareThisMacGrid: an X/Y/Z plot sent to the window's server (Share this Mac) runs its cells
// as one job over one prefill, and every cell goes into the window's history with its own
// settings and its origin, grouped like a batch.
func TestShareThisMacGrid(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModelPath(t)
	f, err := cmf.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	p, err := pipeline.New(f, cpu.New(), pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) { d.Generator = p })
	h.patience = 2 * time.Minute
	ns := h.s.deps.Settings
	ns.Model = model
	ns.Share, ns.ShareAddr = true, "127.0.0.1:0"
	h.s.applyNetwork(ns)
	if h.s.remote.SharedOn() == "" {
		t.Fatalf("not sharing: %s", h.s.message.Text)
	}
	answered := make(chan int, 1)
	go func() {
		body := `{"prompt":"a paper crane","width":64,"height":64,"steps":2,"seed":5,"cfg_scale":1,"script_name":"x/y/z plot",
			"script_args":[1,"1-3",[],0,"",[],0,"",[],true,true,false,false,0,false,false]}`
		req, _ := http.NewRequest("POST", "http://"+h.s.remote.SharedOn()+"/sdapi/v1/txt2img", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+h.s.deps.Settings.ShareToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	deadline := time.After(h.patience)
	for waiting := true; waiting; {
		select { // the window's calls run while the answer is awaited
		case f := <-h.calls:
			f()
		case code := <-answered:
			if code != 200 {
				t.Fatalf("the X/Y/Z plot request: %d", code)
			}
			waiting = false
		case <-deadline:
			t.Fatal("timed out waiting for the API answer")
		}
	}
	if n := len(h.s.queue.Jobs()); n != 1 {
		t.Errorf("%d jobs in the window's queue; want 1 (the grid's cells over one prefill)", n)
	}
	h.pump("the three cells in the window's history", func() bool { return len(h.s.history.Entries) == 3 })
	seeds := map[uint64]bool{}
	batchID := ""
	for _, e := range h.s.history.Entries {
		st := e.Settings
		if st == nil || !strings.HasPrefix(st.Origin, "API ") || st.Prompt != "a paper crane" || st.Batch == nil || st.Batch.Count != 3 {
			t.Fatalf("history entry %s: %+v", e.Path, st)
		}
		if batchID == "" {
			batchID = st.Batch.ID
		}
		if st.Batch.ID != batchID {
			t.Errorf("the cells are in batches %q and %q; want one", batchID, st.Batch.ID)
		}
		seeds[st.Seed] = true
	}
	if !seeds[1] || !seeds[2] || !seeds[3] {
		t.Errorf("the cells' seeds %v; want 1, 2 and 3", seeds)
	}
	// The API's grid never took over the artist's sheet or canvas.
	if h.s.batch.Job() != 0 || h.s.area.Shown() != canvasarea.Canvas || h.s.canvasJob != 0 || h.s.sheet.HasBatch() {
		t.Errorf("the API job took over the window: sheet job %d, centre view %d, canvas job %d", h.s.batch.Job(), h.s.area.Shown(), h.s.canvasJob)
	}
}
