package serve_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"easel/app/jobs"
	"easel/app/serve"
)

// syncBuffer is a log destination the handlers and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestLogsHoldNoPrompts: the request log says what was made but not the prompt, unless the
// server was started with LogPrompts (--log-prompts).
func TestLogsHoldNoPrompts(t *testing.T) {
	for _, withPrompts := range []bool{false, true} {
		var buf syncBuffer
		ts := newTestServer(t, &fakeGen{}, serve.Config{Log: log.New(&buf, "", 0), LogPrompts: withPrompts})
		if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "my secret portrait", "width": 32, "height": 32, "steps": 2}, nil); code != 200 {
			t.Fatalf("%d", code)
		}
		got := buf.String()
		if !strings.Contains(got, "txt2img from") || strings.Contains(got, "my secret portrait") != withPrompts {
			t.Errorf("LogPrompts %v: log %q", withPrompts, got)
		}
	}
}

// TestTLS: with a certificate and key the server answers HTTPS only.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "easel test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)

	q := jobs.New(&fakeGen{}, nil)
	defer q.Close()
	s, err := serve.New(serve.Config{Queue: q, Model: tinyModel(t)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := s.Listen("127.0.0.1:0", certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		<-done
	}()
	pool := x509.NewCertPool()
	cert, _ := x509.ParseCertificate(der)
	pool.AddCert(cert)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get("https://" + ln.Addr().String() + "/sdapi/v1/options")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("HTTPS: %d", resp.StatusCode)
	}
	if resp, err := http.Get("http://" + ln.Addr().String() + "/sdapi/v1/options"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP was answered on the TLS listener")
		}
	}
	if _, err := s.Listen("127.0.0.1:0", filepath.Join(dir, "missing.pem"), keyFile); err == nil {
		t.Error("a missing certificate was accepted")
	}
}
