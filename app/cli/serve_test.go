package cli

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeRefusesOtherAddressesWithoutCredentials: `easel serve --listen 0.0.0.0:PORT` without
// credentials refuses to start (exit 2, saying what to give); with --api-auth it starts, and a
// request without the credentials is 401 while one with them is answered.
func TestServeRefusesOtherAddressesWithoutCredentials(t *testing.T) {
	model := tinyCMF(t)
	code, _, stderr := run("serve", "--listen", "0.0.0.0:0", "--model", model)
	if code != ExitUsage || !strings.Contains(stderr, "--api-auth") {
		t.Fatalf("without credentials: exit %d, %q", code, stderr)
	}

	a, stop := startServe(t, "--listen", "0.0.0.0:0", "--model", model, "--api-auth", "artist:s3cret")
	port := a[strings.LastIndex(a, ":"):]
	url := "http://127.0.0.1" + port + "/sdapi/v1/options"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("without credentials: %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.SetBasicAuth("artist", "s3cret")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("with credentials: %d, want 200", resp.StatusCode)
	}
	stop()
}

// TestServeAllowFromWithoutCredentials: `easel serve --listen 0.0.0.0:PORT --allow-from
// 127.0.0.0/8` starts without credentials and lets a loopback client in; /cmd-flags names the
// model without its folder; a bad network is refused at start (exit 2).
func TestServeAllowFromWithoutCredentials(t *testing.T) {
	model := tinyCMF(t)
	if code, _, stderr := run("serve", "--listen", "0.0.0.0:0", "--model", model, "--allow-from", "10.0.0.0/33"); code != ExitUsage || !strings.Contains(stderr, "--allow-from") {
		t.Fatalf("a bad network: exit %d, %q", code, stderr)
	}
	a, stop := startServe(t, "--listen", "0.0.0.0:0", "--model", model, "--allow-from", "127.0.0.0/8")
	port := a[strings.LastIndex(a, ":"):]
	resp, err := http.Get("http://127.0.0.1" + port + "/sdapi/v1/cmd-flags")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(string(body), filepath.Dir(model)) || !strings.Contains(string(body), `"model":"`+filepath.Base(model)+`"`) {
		t.Errorf("cmd-flags from loopback without credentials: %d %s", resp.StatusCode, body)
	}
	stop()
}

// startServe runs `easel serve` with args in this process and returns the address it listens on,
// once it does (within 120 s); stop interrupts it and waits (60 s at most) for a clean exit.
func startServe(t *testing.T, args ...string) (addr string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	oldCtx, oldListening := interruptContext, serveListening
	listening := make(chan string, 1)
	interruptContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	serveListening = func(a string) { listening <- a }
	t.Cleanup(func() { interruptContext, serveListening = oldCtx, oldListening })
	exited := make(chan int, 1)
	go func() {
		code, _, _ := run(append([]string{"serve"}, args...)...)
		exited <- code
	}()
	select {
	case addr = <-listening:
	case code := <-exited:
		t.Fatalf("easel serve %s exited %d", strings.Join(args, " "), code)
	case <-time.After(120 * time.Second):
		t.Fatal("easel serve did not start listening")
	}
	return addr, func() {
		t.Helper()
		cancel()
		select {
		case code := <-exited:
			if code != ExitOK {
				t.Errorf("easel serve exited %d after the interrupt", code)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("easel serve did not stop on the interrupt")
		}
	}
}
