package studio

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

func TestOpenAddressWithoutTokenIsRefused(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", "192.168.1.20:4222", ":4222"} {
		_, err := StartHub(HubConfig{Listen: listen, Data: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "--token") {
			t.Errorf("--listen %s without a token: %v, want a refusal asking for --token", listen, err)
		}
	}
	_, err := StartHub(HubConfig{Listen: "127.0.0.1:0", Token: "short", Data: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("a 5-character token: %v", err)
	}
}

func TestWrongTokenIsRefused(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken})
	for _, tok := range []string{"", "0123456789abcdef-wrong-token"} {
		_, err := Dial(context.Background(), h.URL(), DialOptions{Role: RoleWorker, Token: tok})
		if err == nil || !strings.Contains(err.Error(), "token") {
			t.Errorf("token %q: %v, want a refusal about the token", tok, err)
		}
	}
	dial(t, h, RoleWorker, testToken) // the right one connects
}

func TestPlaintextClientRefusedWhereTLSIsRequired(t *testing.T) {
	// A hub with TLS (a self-signed pair, as on a network address) on loopback for the test.
	dir := t.TempDir()
	cfg := HubConfig{Listen: "127.0.0.1:0", Token: testToken, Data: dir}
	if err := selfSign(dir+"/tls", dir+"/tls/c.pem", dir+"/tls/k.pem"); err != nil {
		t.Fatal(err)
	}
	cfg.TLSCert, cfg.TLSKey = dir+"/tls/c.pem", dir+"/tls/k.pem"
	h := startTestHub(t, cfg)
	if h.Fingerprint == "" || !strings.HasPrefix(h.URL(), "tls://") {
		t.Fatalf("hub with a certificate: fingerprint %q, url %s", h.Fingerprint, h.URL())
	}
	plain := "nats://" + strings.TrimPrefix(h.URL(), "tls://")
	if _, err := Dial(context.Background(), plain, DialOptions{Role: RoleWorker, Token: testToken}); err == nil {
		t.Fatal("a plaintext client connected to a hub that requires TLS")
	}
	// On the wire: a client that sends CONNECT in plaintext gets no PONG, only an error.
	raw, err := net.Dial("tcp", strings.TrimPrefix(h.URL(), "tls://"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(raw)
	info, _ := r.ReadString('\n')
	if !strings.Contains(info, `"tls_required":true`) {
		t.Fatalf("INFO does not require TLS: %s", info)
	}
	fmt.Fprintf(raw, "CONNECT {\"user\":\"worker\",\"pass\":%q,\"verbose\":false}\r\nPING\r\n", testToken)
	reply, _ := r.ReadString('\n')
	if strings.HasPrefix(reply, "PONG") {
		t.Fatalf("a plaintext CONNECT was accepted: %q", reply)
	}
	if _, err := Dial(context.Background(), h.URL(), DialOptions{Role: RoleWorker, Token: testToken, Pin: strings.Repeat("ab", 32)}); err == nil ||
		!strings.Contains(err.Error(), "fingerprint") {
		t.Fatalf("a wrong pin: %v, want a refusal naming the fingerprint", err)
	}
	c := dial(t, h, RoleWorker, testToken) // the pinned fingerprint connects
	if !c.NC.TLSRequired() {
		t.Error("the pinned connection is not TLS")
	}
}

func TestWorkerCannotPublishJobsOrDeleteTheQueue(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken})
	w := dial(t, h, RoleWorker, testToken)
	// a denied publish gets no acknowledgement: bound the wait
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := w.JS.Publish(ctx, jobsSubject("x", "b"), []byte("{}")); err == nil {
		t.Error("a worker published a job")
	}
	if err := w.JS.DeleteStream(ctx, StreamName); err == nil {
		t.Error("a worker deleted the job stream")
	}
	c := dial(t, h, RoleClient, testToken)
	if err := c.JS.DeleteStream(ctx, StreamName); err == nil {
		t.Error("a client deleted the job stream")
	}
}

// With a worker token, a Mac given only it renders and delivers, but cannot submit jobs or
// read the results, nor connect as a client; the client token does not open a worker.
func TestWorkerTokenCannotSubmitOrReadResults(t *testing.T) {
	const workerToken = "fedcba9876543210-worker-token"
	h := startTestHub(t, HubConfig{Token: testToken, WorkerToken: workerToken})
	wc, err := Dial(context.Background(), h.URL(), DialOptions{Role: RoleWorker, Token: workerToken, Pin: h.Fingerprint, Name: "mac"})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	w := &Worker{Name: "mac", Model: "m.cmf", Fingerprint: testFP, Renderer: echoRenderer(1, nil), FetchWait: 500 * time.Millisecond}
	wctx, stop := context.WithCancel(context.Background())
	finished := make(chan struct{})
	go func() { defer close(finished); w.Run(wctx, wc) }()
	defer func() { stop(); <-finished }()
	c := dial(t, h, RoleClient, testToken)
	waitFor(t, 10*time.Second, func() bool { ws, _ := c.Workers(context.Background()); return len(ws) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// a result the client has not collected yet: the worker's connection cannot read it
	obs, err := c.JS.ObjectStore(ctx, ResultsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.PutBytes(ctx, "b/0/1-other", []byte("someone's image")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx, makeJobs(1, testFP), func(Event) {}); err != nil {
		t.Fatalf("a batch rendered by the worker-token Mac: %v", err)
	}
	short, c2 := context.WithTimeout(ctx, time.Second)
	defer c2()
	wobs, err := wc.JS.ObjectStore(short, ResultsBucket)
	if err == nil {
		if data, err := wobs.GetBytes(short, "b/0/1-other"); err == nil {
			t.Errorf("the worker token read a result: %q", data)
		}
	}
	if rs, err := wc.JS.Stream(short, "OBJ_"+ResultsBucket); err == nil {
		for seq := uint64(1); seq <= 3; seq++ {
			if m, err := rs.GetMsg(short, seq); err == nil {
				t.Errorf("the worker token read message %d of the results (%s)", seq, m.Subject)
			}
		}
	}
	if _, err := wc.JS.Publish(short, jobsSubject(testFP.Key(), "b"), []byte("{}")); err == nil {
		t.Error("the worker token submitted a job")
	}
	for _, o := range []DialOptions{{Role: RoleClient, Token: workerToken}, {Role: RoleWorker, Token: testToken}} {
		o.Pin = h.Fingerprint
		if c, err := Dial(context.Background(), h.URL(), o); err == nil {
			c.Close()
			t.Errorf("%s connected with the other role's token", o.Role)
		}
	}
}
