package download_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"easel/app/download"
)

// Offline, listing the repository says so in a plain sentence — the host, offline, what to do —
// with no resolver or socket text; the network's error stays inside for errors.As.
func TestListOfflineSaysSoPlainly(t *testing.T) {
	// No name resolution (what an offline machine gets for huggingface.co).
	noDNS := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.DNSError{Err: "no such host", Name: "huggingface.co", IsNotFound: true}
	}}}
	// Nothing listening (a port just closed on loopback).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	for _, r := range []*download.Remote{
		{BaseURL: download.DefaultBaseURL, Repo: repo, Client: noDNS},
		{BaseURL: closed, Repo: repo},
	} {
		_, err := r.List(context.Background())
		var u *download.UnreachableError
		if !errors.As(err, &u) {
			t.Fatalf("listing from %s: %v; want an UnreachableError", r.BaseURL, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, "cannot be reached: this computer seems to be offline") || strings.Contains(msg, "dial") || strings.Contains(msg, "no such host") || strings.Contains(msg, "lookup") {
			t.Errorf("offline from %s the message is %q", r.BaseURL, msg)
		}
	}
	if _, err := (&download.Remote{BaseURL: download.DefaultBaseURL, Repo: repo, Client: noDNS}).List(context.Background()); !strings.HasPrefix(err.Error(), "huggingface.co cannot be reached") {
		t.Errorf("the message names %q, want huggingface.co first", err.Error())
	}
}
