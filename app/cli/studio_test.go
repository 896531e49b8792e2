package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"easel/app/studio"
)

// TestStudioWorkerProcess is not a test: it is the worker subprocess of the studio tests (the
// test binary re-run with EASEL_STUDIO_WORKER_ARGS), so a worker can be SIGKILLed. With
// EASEL_STUDIO_WORKER_ON_TAKEN it stops or leaves as it announces its first job (onFirstTaken).
func TestStudioWorkerProcess(t *testing.T) {
	args := os.Getenv("EASEL_STUDIO_WORKER_ARGS")
	if args == "" {
		t.Skip("only runs as a studio worker subprocess")
	}
	var a []string
	json.Unmarshal([]byte(args), &a)
	var stdout io.Writer = os.Stdout
	switch os.Getenv("EASEL_STUDIO_WORKER_ON_TAKEN") {
	case stopWhenTaken:
		stdout = &onFirstTaken{out: os.Stdout, do: func() { syscall.Kill(os.Getpid(), syscall.SIGSTOP) }}
	case leaveWhenTaken:
		// The worker's context ends (a SIGTERM) and every context made from it with it before
		// the "taken" line's Write returns.
		left := make(chan struct{})
		interrupt := studioInterrupt
		studioInterrupt = func() (context.Context, context.CancelFunc) {
			sig, stop := interrupt()
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-sig.Done()
				cancel() // returns once the contexts made from ctx have ended
				close(left)
			}()
			return ctx, func() { stop(); cancel() }
		}
		stdout = &onFirstTaken{out: os.Stdout, do: func() { syscall.Kill(os.Getpid(), syscall.SIGTERM); <-left }}
	}
	os.Exit(Run(a, stdout, os.Stderr))
}

// What a worker subprocess does as it announces its first job (EASEL_STUDIO_WORKER_ON_TAKEN):
// stop (SIGSTOP, a Mac falling asleep; it goes on at SIGCONT, or is killed stopped), or leave
// (SIGTERM, as Ctrl-C or a quit).
const (
	stopWhenTaken  = "stop"
	leaveWhenTaken = "leave"
)

// onFirstTaken passes a worker's --json lines on and, right after its first "taken" line, does
// its fault before the line's Write returns. The worker announces a job on the goroutine that
// then renders it, so the fault comes before the render, whatever the machine's load. (A signal
// sent by the test on reading the line lands anywhere later: mid-render, or after the image was
// stored and the job acknowledged.)
type onFirstTaken struct {
	out  io.Writer
	do   func()
	done bool
}

func (f *onFirstTaken) Write(p []byte) (int, error) {
	n, err := f.out.Write(p)
	var e studio.WorkerEvent
	if !f.done && json.Unmarshal(p, &e) == nil && e.Kind == "taken" {
		f.done = true // a worker handles one job at a time: one writer
		f.do()
	}
	return n, err
}

// studioWorker is a worker subprocess with its --json events.
type studioWorker struct {
	cmd    *exec.Cmd
	events chan studio.WorkerEvent
}

// startStudioWorker starts a worker subprocess; onTaken, when set, is what it does as it announces
// its first job (stopWhenTaken, leaveWhenTaken).
func startStudioWorker(t *testing.T, url, token, model, name, onTaken string) *studioWorker {
	t.Helper()
	a, _ := json.Marshal([]string{"studio", "join", url, "--token", token, "--model", model, "--name", name, "--backend", "cpu", "--json"})
	cmd := exec.Command(os.Args[0], "-test.run=^TestStudioWorkerProcess$")
	cmd.Env = append(os.Environ(), "EASEL_STUDIO_WORKER_ARGS="+string(a))
	if onTaken != "" {
		cmd.Env = append(cmd.Env, "EASEL_STUDIO_WORKER_ON_TAKEN="+onTaken)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &studioWorker{cmd: cmd, events: make(chan studio.WorkerEvent, 256)}
	go func() {
		s := bufio.NewScanner(pipe)
		for s.Scan() {
			var e studio.WorkerEvent
			if json.Unmarshal(s.Bytes(), &e) == nil && e.Kind != "" {
				w.events <- e
			}
		}
		close(w.events)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if t.Failed() {
			t.Logf("worker %s stderr:\n%s", name, stderr.String())
		}
	})
	return w
}

// TestStudioBatchOverThreeWorkerProcesses: a hub on loopback, three `easel studio join`
// subprocesses on the tiny model; a batch of 24 through `easel generate --studio` while one
// worker is SIGKILLed holding a job. All 24 files arrive, each bit-identical to the local batch's
// image of its seed (itself the single run of that seed), and the killed worker's image says
// attempt 2. mac-1 stops itself as it announces its first job (onFirstTaken) and is killed
// stopped: a kill sent on reading that line could land after the image was stored.
func TestStudioBatchOverThreeWorkerProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 48 tiny images")
	}
	model := tinyCMF(t)
	url, workers := startStudio(t, model, 2*time.Second, 3, stopWhenTaken)
	// SIGKILL mac-1 as soon as it holds a job (it is stopped, holding it).
	killed := make(chan studio.WorkerEvent, 1)
	go func() {
		for e := range workers[0].events {
			if e.Kind == "taken" {
				workers[0].cmd.Process.Kill()
				killed <- e
				return
			}
		}
	}()
	dir := t.TempDir()
	common := []string{"--model", model, "--prompt", "a lighthouse", "--size", "32x32", "--steps", "2", "--seed", "7", "--count", "24", "--backend", "cpu", "--json"}
	code, stdout, stderr := run(append([]string{"generate", "--studio", url, "--token", studioTestToken, "--out", filepath.Join(dir, "studio.png")}, common...)...)
	if code != ExitOK {
		t.Fatalf("generate --studio: exit %d: %s", code, stderr)
	}
	var k studio.WorkerEvent
	select {
	case k = <-killed:
	default:
		t.Fatal("mac-1 never took a job, so it was not killed")
	}
	saved := map[int]map[string]any{}
	for _, ev := range jsonLines(t, stdout) {
		if ev["stage"] == "saved" {
			i := int(ev["image"].(float64))
			if saved[i] != nil {
				t.Errorf("image %d saved twice", i)
			}
			saved[i] = ev
		}
	}
	if len(saved) != 24 {
		t.Fatalf("%d images saved, want 24", len(saved))
	}
	killedImage := k.Index + 1
	if a := saved[killedImage]["attempt"].(float64); a != 2 || saved[killedImage]["worker"] == "mac-1" {
		t.Errorf("the killed worker's image %d: attempt %v by %v, want attempt 2 by another Mac", killedImage, a, saved[killedImage]["worker"])
	}
	// The local batch (one process, no studio): each image is the single run of its seed.
	code, _, stderr = run(append([]string{"generate", "--out", filepath.Join(dir, "local.png")}, common...)...)
	if code != ExitOK {
		t.Fatalf("local batch: exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 48 {
		t.Errorf("%d files in the output folder, want 24 studio + 24 local", len(entries))
	}
	for i := 1; i <= 24; i++ {
		s := pixelsOf(t, filepath.Join(dir, fmt.Sprintf("studio-%d.png", i)))
		l := pixelsOf(t, filepath.Join(dir, fmt.Sprintf("local-%d.png", i)))
		if !bytes.Equal(s, l) {
			t.Errorf("image %d (seed %d, by %v): the studio's pixels differ from the local render's", i, 6+i, saved[i]["worker"])
		}
		if saved[i]["seed"].(float64) != float64(6+i) {
			t.Errorf("image %d: seed %v, want %d", i, saved[i]["seed"], 6+i)
		}
	}
}

const studioTestToken = "studio-test-token-0123456789"

// startStudio runs a loopback hub with the ack wait and n worker subprocesses on the model
// (mac-1, mac-2...; onTaken[i], when given, is what mac-i+1 does as it announces its first job),
// and waits (bounded) until each has joined.
func startStudio(t *testing.T, model string, ackWait time.Duration, n int, onTaken ...string) (string, []*studioWorker) {
	t.Helper()
	h, err := studio.StartHub(studio.HubConfig{Listen: "127.0.0.1:0", Token: studioTestToken, Data: t.TempDir(), AckWait: ackWait})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	url := h.URL()
	var workers []*studioWorker
	for i := 1; i <= n; i++ {
		fault := ""
		if i <= len(onTaken) {
			fault = onTaken[i-1]
		}
		workers = append(workers, startStudioWorker(t, url, studioTestToken, model, "mac-"+strconv.Itoa(i), fault))
	}
	for _, w := range workers {
		select {
		case e := <-w.events:
			if e.Kind != "joined" {
				t.Fatalf("first worker event %+v, want joined", e)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("a worker did not join within 60 s")
		}
	}
	return url, workers
}
