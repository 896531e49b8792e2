package remote

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"easel/app/serve/client"
	"easel/engine/pipeline"
)

// TestRemoteErrorsInPlainWords: the errors a real remote render meets (a port nobody listens on,
// a name that does not resolve) read as sentences about the other machine, with no Go, HTTP or
// resolver text.
func TestRemoteErrorsInPlainWords(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close() // nothing listens there now: the connection is refused
	for _, tc := range []struct {
		addr, want string
	}{
		{closed, "is not answering on that port"},
		{"easel-test-host.invalid:7860", "could not be found on the network"},
	} {
		g := &client.Generator{Addr: tc.addr, Token: "0123456789abcdef"}
		ctx, cancel := context.WithCancel(context.Background())
		_, err := g.Run(ctx, pipeline.Request{Prompt: "a fox", Width: 256, Height: 256, Steps: 2, CFG: 1}, nil)
		cancel()
		if err == nil {
			t.Fatalf("%s: the job ran", tc.addr)
		}
		got := PlainJobError(err, tc.addr)
		if !strings.Contains(got, tc.want) || !strings.HasPrefix(got, tc.addr) {
			t.Errorf("%s: %q, want it to say %q", tc.addr, got, tc.want)
		}
		for _, raw := range []string{"dial tcp", "Post \"", "lookup", "http://"} {
			if strings.Contains(got, raw) {
				t.Errorf("%s: %q still shows %q", tc.addr, got, raw)
			}
		}
	}
	// An error written for the artist stays as it is; a local job's error is not rewritten.
	own := errors.New("mini.local refused the job (HTTP 400): steps must be between 1 and 150")
	if got := PlainJobError(own, "mini.local"); got != own.Error() {
		t.Errorf("an explained refusal became %q", got)
	}
	if got := PlainJobError(http.ErrHandlerTimeout, ""); got != http.ErrHandlerTimeout.Error() {
		t.Errorf("a local error became %q", got)
	}
}
