package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"easel/app/activity"
	"easel/app/studio"
)

// TestStudioJoinHandsBackWhenAsleep: `easel studio join` (the command-line worker) hears the
// Mac's sleep notice (activity.WillSleep, called by the macOS power observer in any process):
// the job in hand goes back to the queue before the notice returns, nothing is taken while the
// Mac sleeps, and after the wake (activity.DidWake) the same worker, still joined, renders it as
// attempt 2 — pixel for pixel the local render of that seed.
func TestStudioJoinHandsBackWhenAsleep(t *testing.T) {
	if testing.Short() {
		t.Skip("renders tiny images")
	}
	t.Cleanup(activity.DidWake)
	model := tinyCMF(t)
	url, _ := startStudio(t, model, time.Minute, 0)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	oldInterrupt := studioInterrupt
	studioInterrupt = func() (context.Context, context.CancelFunc) { return ctx, stop }
	defer func() { studioInterrupt = oldInterrupt }()

	joined := make(chan struct{})
	type asleep struct {
		status *studio.Status
		err    error
	}
	slept := make(chan asleep, 1)
	var handedBack []map[string]any
	var taken int
	client, err := studio.Dial(ctx, url, studio.DialOptions{Role: studio.RoleClient, Token: studioTestToken, Name: "status"})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	workerDone, workerErr := generateLive([]string{"studio", "join", url, "--token", studioTestToken, "--model", model,
		"--backend", "cpu", "--name", "sleeper", "--json"}, func(ev map[string]any) {
		switch ev["event"] {
		case "joined":
			close(joined)
		case "handed_back":
			handedBack = append(handedBack, ev)
		case "taken":
			taken++
			if taken != 1 {
				return
			}
			// The first job is in hand: the Mac is about to sleep (off this line's reader,
			// which the worker's hand-back event needs).
			go func() {
				activity.WillSleep()
				var a asleep
				// The worker's status reaches the hub a moment after its Nak.
				for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
					a.status, a.err = client.Status(context.Background())
					if a.err == nil && len(a.status.Workers) == 1 && a.status.Workers[0].State == studio.StateIdle {
						break
					}
				}
				slept <- a
				activity.DidWake()
			}()
		}
	})
	select {
	case <-joined:
	case code := <-workerDone:
		t.Fatalf("studio join exited %d: %s", code, workerErr)
	case <-time.After(60 * time.Second):
		t.Fatal("the worker did not join within 60 s")
	}

	dir := t.TempDir()
	args := []string{"--model", model, "--prompt", "a lighthouse", "--size", "64x64", "--steps", "30", "--seed", "3"}
	var stdout bytes.Buffer
	var stderr bytes.Buffer
	if code := Run(append(append([]string{"generate", "--studio", url, "--token", studioTestToken}, args...),
		"--out", filepath.Join(dir, "s.png"), "--json"), &stdout, &stderr); code != ExitOK {
		t.Fatalf("generate --studio: exit %d: %s", code, stderr.String())
	}
	stop()
	if code := <-workerDone; code != ExitOK {
		t.Errorf("studio join exited %d after Ctrl-C: %s", code, workerErr)
	}

	a := <-slept
	if a.err != nil || a.status.Queued != 1 || a.status.Workers[0].State != studio.StateIdle {
		t.Errorf("while the Mac slept the studio was %+v (%v); want the image queued and the worker idle", a.status, a.err)
	}
	if len(handedBack) != 1 || !strings.Contains(handedBack[0]["detail"].(string), "sleep") {
		t.Errorf("the worker's hand-backs: %v; want one, saying the Mac is going to sleep", handedBack)
	}
	var saved map[string]any
	for _, ev := range jsonLines(t, stdout.String()) {
		if ev["stage"] == "saved" {
			saved = ev
		}
	}
	if saved == nil || saved["worker"] != "sleeper" || saved["attempt"] != 2.0 {
		t.Fatalf("saved event %v; want the image from sleeper at attempt 2", saved)
	}
	if code, _, stderr := run(append(append([]string{"generate"}, args...), "--backend", "cpu", "--out", filepath.Join(dir, "local.png"))...); code != ExitOK {
		t.Fatalf("local generate: exit %d: %s", code, stderr)
	}
	if !bytes.Equal(pixelsOf(t, filepath.Join(dir, "s.png")), pixelsOf(t, filepath.Join(dir, "local.png"))) {
		t.Error("the image rendered after the wake differs from the local render of its seed")
	}
}
