package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"easel/app"
	"easel/app/studio"
)

// `easel generate --studio` killed with kill -9 while its images wait (no Mac takes them): the
// hub sees its client gone and its jobs leave the queue within the client timeout.
func TestStudioKilledClientsJobsLeaveTheQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("runs easel generate --studio in a subprocess on the tiny model")
	}
	model := tinyCMF(t)
	logged := make(chan string, 64)
	h, err := studio.StartHub(studio.HubConfig{Listen: "127.0.0.1:0", Token: studioTestToken, Data: t.TempDir(),
		ClientTimeout: 3 * time.Second, Logf: func(format string, a ...any) {
			select {
			case logged <- format:
			default:
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	admin, err := h.Connect(studio.RoleClient)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// a Mac with the model that takes nothing (asleep, say): the client sees a taker and waits
	m, f := openModel(model)
	if f != nil {
		t.Fatal(f.err)
	}
	key := studio.Fingerprint{Easel: app.Version, Model: modelFingerprint(m)}.Key()
	m.Close()
	kv, err := admin.JS.KeyValue(ctx, studio.WorkersBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "asleep", []byte(`{"name":"asleep","model":"m.cmf","key":"`+key+`","state":"idle"}`)); err != nil {
		t.Fatal(err)
	}

	a, _ := json.Marshal([]string{"generate", "--studio", h.URL(), "--token", studioTestToken, "--model", model, "--prompt", "p",
		"--size", "32x32", "--steps", "2", "--count", "3", "--out", filepath.Join(t.TempDir(), "k.png"), "--json"})
	cmd := exec.Command(os.Args[0], "-test.run=^TestStudioWorkerProcess$")
	cmd.Env = append(os.Environ(), "EASEL_STUDIO_WORKER_ARGS="+string(a))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// its first line names the batch; then its 3 jobs are in the queue
	s := bufio.NewScanner(out)
	batch := ""
	for batch == "" && s.Scan() {
		var ev map[string]any
		if json.Unmarshal(s.Bytes(), &ev) == nil && ev["event"] == "submitted" {
			batch, _ = ev["batch"].(string)
		}
	}
	if batch == "" {
		t.Fatal("the client did not say its batch")
	}
	stream, err := admin.JS.Stream(ctx, studio.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	for queued := 0; queued < 3; {
		st, err := admin.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range st.Batches {
			if b.Batch == batch {
				queued = b.Jobs
			}
		}
		if ctx.Err() != nil {
			t.Fatal("the client's jobs never reached the queue")
		}
		time.Sleep(20 * time.Millisecond) // a bounded poll of the hub's state
	}
	cmd.Process.Kill() // kill -9: no word, no cancel
	cmd.Wait()
	for {
		select {
		case line := <-logged:
			if !strings.Contains(line, "client is gone") {
				continue
			}
		case <-ctx.Done():
			t.Fatal("the hub did not drop the killed client's jobs within 2 minutes")
		}
		break
	}
	info, err := stream.Info(ctx)
	if err != nil || info.State.Msgs != 0 {
		t.Fatalf("after the client was killed the queue holds %d jobs (%v)", info.State.Msgs, err)
	}
}
