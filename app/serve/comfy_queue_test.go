package serve_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"easel/app/serve"
)

// TestComfyQueueAndInterrupt: workflows wait their turn (/queue shows one running, the others
// pending); POST /queue with delete drops a waiting one; POST /interrupt ends the running one, which its client hears as
// execution_interrupted and /history records as an error, and the next one runs to the end.
func TestComfyQueueAndInterrupt(t *testing.T) {
	gen := &fakeGen{gate: make(chan struct{})}
	base, _, _ := listening(t, gen, serve.Config{})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws?clientId=c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	post := func() string {
		var q struct {
			PromptID string `json:"prompt_id"`
		}
		wf := comfyDefaultWorkflow("x", "", 1, 2, 1, 32, 32)
		if code, body := bearer(t, "POST", base+"/prompt", "", map[string]any{"prompt": wf, "client_id": "c1"}, &q); code != 200 {
			t.Fatalf("POST /prompt: %d %s", code, body)
		}
		return q.PromptID
	}
	first, second, third := post(), post(), post()
	gen.gate <- struct{}{} // the first is at its first step
	var queue struct {
		Running [][]any `json:"queue_running"`
		Pending [][]any `json:"queue_pending"`
	}
	bearer(t, "GET", base+"/queue", "", nil, &queue)
	if len(queue.Running) != 1 || queue.Running[0][1] != first || len(queue.Pending) != 2 || queue.Pending[0][1] != second || queue.Pending[1][1] != third {
		t.Fatalf("/queue: %+v", queue)
	}
	if code, _ := bearer(t, "POST", base+"/queue", "", map[string]any{"delete": []string{third}}, nil); code != 200 {
		t.Fatalf("POST /queue: %d", code)
	}
	bearer(t, "GET", base+"/api/queue", "", nil, &queue)
	if len(queue.Pending) != 1 || queue.Pending[0][1] != second {
		t.Fatalf("/queue after deleting the third: %+v", queue)
	}
	if code, _ := bearer(t, "POST", base+"/interrupt", "", nil, nil); code != 200 {
		t.Fatalf("/interrupt: %d", code)
	}
	go func() {
		for range 2 {
			select {
			case gen.gate <- struct{}{}:
			case <-ctx.Done():
			}
		}
	}()
	var seen []string
	for done := 0; done < 2; {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("reading: %v (seen %v)", err, seen)
		}
		if typ != websocket.MessageText {
			continue
		}
		var m wsMessage
		json.Unmarshal(data, &m)
		if m.Type == "executing" && m.Data["node"] == nil {
			done++
		}
		if id, ok := m.Data["prompt_id"].(string); ok && m.Type != "progress" {
			seen = append(seen, m.Type+":"+map[string]string{first: "1", second: "2"}[id])
		}
	}
	got := strings.Join(seen, " ")
	if !strings.Contains(got, "execution_interrupted:1") || !strings.Contains(got, "executed:2") || strings.Contains(got, "executed:1") {
		t.Errorf("messages %s", got)
	}
	var hist map[string]struct {
		Status struct {
			StatusStr string `json:"status_str"`
		}
	}
	bearer(t, "GET", base+"/history", "", nil, &hist)
	if hist[first].Status.StatusStr != "error" || hist[second].Status.StatusStr != "success" {
		t.Errorf("history %+v", hist)
	}
}
