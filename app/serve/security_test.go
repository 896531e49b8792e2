package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"easel/app/jobs"
	"easel/app/serve"
)

// TestNonLoopbackNeedsCredentials: any address but loopback is refused without credentials;
// with them, requests without (or with wrong) credentials get 401, with them 200, Basic or token.
func TestNonLoopbackNeedsCredentials(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:7860", "[::]:7860", "192.0.2.7:7860", ":7860"} {
		if err := serve.Check(addr, serve.Auth{}, "", ""); err == nil || !strings.Contains(err.Error(), "--api-auth") {
			t.Errorf("%s without credentials: %v", addr, err)
		}
		if err := serve.Check(addr, serve.Auth{User: "u", Pass: "p"}, "", ""); err != nil {
			t.Errorf("%s with credentials: %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:7860", "[::1]:0", "localhost:7860"} {
		if err := serve.Check(addr, serve.Auth{}, "", ""); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	if err := serve.Check("127.0.0.1:7860", serve.Auth{}, "cert.pem", ""); err == nil {
		t.Error("a certificate without its key was accepted")
	}
	ts := newTestServer(t, &fakeGen{}, serve.Config{Auth: serve.Auth{User: "artist", Pass: "s3cret", Token: "tok"}})
	try := func(set func(*http.Request)) int {
		req, _ := http.NewRequest("GET", ts.URL+"/sdapi/v1/options", nil)
		set(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 401 && resp.Header.Get("WWW-Authenticate") == "" {
			t.Error("401 without a challenge")
		}
		return resp.StatusCode
	}
	for name, c := range map[string]struct {
		set  func(*http.Request)
		want int
	}{
		"none":        {func(*http.Request) {}, 401},
		"wrong pass":  {func(r *http.Request) { r.SetBasicAuth("artist", "guess") }, 401},
		"wrong user":  {func(r *http.Request) { r.SetBasicAuth("admin", "s3cret") }, 401},
		"wrong token": {func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, 401},
		"basic":       {func(r *http.Request) { r.SetBasicAuth("artist", "s3cret") }, 200},
		"token":       {func(r *http.Request) { r.Header.Set("Authorization", "Bearer tok") }, 200},
	} {
		if got := try(c.set); got != c.want {
			t.Errorf("%s: %d, want %d", name, got, c.want)
		}
	}
}

// listening serves cfg on a real loopback listener (the timeouts and the connection cap are the
// http.Server's), returning its address.
func listening(t *testing.T, gen jobs.Generator, cfg serve.Config) (string, *serve.Server, *jobs.Queue) {
	t.Helper()
	cfg.Model = tinyModel(t)
	q := jobs.New(gen, nil)
	cfg.Queue = q
	s, err := serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := s.Listen("127.0.0.1:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		<-done
		q.Close()
	})
	return "http://" + ln.Addr().String(), s, q
}

// zeros is an endless body that allocates nothing.
type zeros struct {
	n     atomic.Int64 // read by the test while the client's transport may still be sending
	limit int64
}

func (z *zeros) Read(p []byte) (int, error) {
	sent := z.n.Load()
	if sent >= z.limit {
		return 0, io.EOF
	}
	n := int64(len(p))
	if sent+n > z.limit {
		n = z.limit - sent
	}
	clear(p[:n])
	z.n.Add(n)
	return int(n), nil
}

// TestHostileRequestsAndTheServerKeepsServing: a 1 GB body (streamed, with and without a length)
// is 413 (or the connection is cut once the cap is passed), a 20000² image is a 422 naming the
// field before it is decoded, a client that sends its header slowly is cut off after the header
// timeout, a client that disconnects mid-job has its job cancelled — and after each the server
// still answers a normal request.
func TestHostileRequestsAndTheServerKeepsServing(t *testing.T) {
	gen := &fakeGen{gate: make(chan struct{})}
	url, _, q := listening(t, gen, serve.Config{MaxBody: 8 << 20, HeaderTimeout: 300 * time.Millisecond})
	healthy := func(when string) {
		t.Helper()
		var opts map[string]any
		if code := call(t, "GET", url+"/sdapi/v1/options", nil, &opts); code != 200 {
			t.Fatalf("%s: the server no longer answers (%d)", when, code)
		}
	}

	for _, known := range []bool{true, false} {
		z := &zeros{limit: 1 << 30}
		req, _ := http.NewRequest("POST", url+"/sdapi/v1/txt2img", z)
		if known {
			req.ContentLength = 1 << 30
		} else {
			req.ContentLength = -1 // chunked
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("1 GB body (length known %v): %d", known, resp.StatusCode)
			}
		}
		if sent := z.n.Load(); sent > 64<<20 {
			t.Errorf("1 GB body (length known %v): the server read %d MB of it", known, sent>>20)
		}
		healthy("after a 1 GB body")
	}

	var big bytes.Buffer
	png.Encode(&big, image.NewGray(image.Rect(0, 0, 20000, 20000)))
	var e struct{ Detail []map[string]any }
	if code := call(t, "POST", url+"/sdapi/v1/txt2img", map[string]any{"extra_images": []string{pngBase64Bytes(big.Bytes())}}, &e); code != 422 ||
		fmt.Sprint(e.Detail[0]["loc"]) != "[body extra_images 0]" || !strings.Contains(fmt.Sprint(e.Detail[0]["msg"]), "20000") {
		t.Errorf("a 20000² image: %d %v", code, e.Detail)
	}
	healthy("after a 20000² image")

	slow, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(slow, "GET /sdapi/v1/options HTTP/1.1\r\nHost: x\r\n")
	healthy("while a client sends its header slowly")
	slow.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := bufio.NewReader(slow).ReadString('\n'); err == nil {
		// The server may answer 408 before it closes; then the next read ends.
		if _, err := io.ReadAll(slow); err != nil && !errors.Is(err, io.EOF) {
			t.Errorf("the slow client's connection: %v", err)
		}
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Error("the server kept a client that never finished its header")
	}
	slow.Close()

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/sdapi/v1/txt2img", strings.NewReader(`{"width":32,"height":32,"steps":3}`))
	gone := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		gone <- err
	}()
	gen.gate <- struct{}{}
	cancel()
	<-gone
	waitFor(t, "the departed client's job to be cancelled", func() bool {
		js := q.Jobs()
		return len(js) > 0 && js[len(js)-1].State == jobs.Cancelled
	})
	gen.gate = nil
	healthy("after a client left mid-job")
	var resp genResponse
	if code := call(t, "POST", url+"/sdapi/v1/txt2img", map[string]any{"width": 32, "height": 32, "steps": 2}, &resp); code != 200 || len(resp.Images) != 1 {
		t.Errorf("the next request: %d", code)
	}
}

// TestQueueFullIs503: past the queue's bound a request gets 503 with Retry-After, and once the
// queue drains requests run again.
func TestQueueFullIs503(t *testing.T) {
	gen := &fakeGen{gate: make(chan struct{})}
	ts := newTestServer(t, gen, serve.Config{MaxPending: 2})
	first := make(chan int, 1)
	go func() {
		first <- call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"width": 32, "height": 32, "steps": 2, "batch_size": 2}, nil)
	}()
	waitFor(t, "two jobs pending", func() bool { return ts.Queue.Pending() == 2 })
	req, _ := http.NewRequest("POST", ts.URL+"/sdapi/v1/txt2img", strings.NewReader(`{"width":32,"height":32}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("past the bound: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	for range 4 {
		gen.gate <- struct{}{}
	}
	if code := <-first; code != 200 {
		t.Errorf("the first request: %d", code)
	}
}

func pngBase64Bytes(b []byte) string { return pngB64(b) }
