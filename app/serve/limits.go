package serve

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
)

// limitListener accepts at most n connections at once; the next waits in Accept (the kernel's
// backlog) until one closes.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limited{Listener: ln, slots: make(chan struct{}, n)}
}

type limited struct {
	net.Listener
	slots chan struct{}
}

func (l *limited) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// errTooLarge is a body over the cap.
var errTooLarge = errors.New("request body too large")

// readBody reads a request body up to max bytes, streaming: a larger body is refused as soon as
// it passes the cap (from Content-Length before reading anything), never held in memory.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if r.ContentLength > max {
		return nil, errTooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, errTooLarge
	}
	return body, err
}

// tooLarge answers 413 naming the cap.
func tooLarge(w http.ResponseWriter, max int64) {
	w.Header().Set("Connection", "close")
	writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{
		"detail": fmt.Sprintf("the request body is larger than this server's cap of %d MB: send smaller images", max>>20)})
}
