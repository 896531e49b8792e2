package comfy

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// hub is the /ws connections by client id. Messages go out through each connection's own
// buffered channel and goroutine, so a slow client never holds the queue's reporting: when its
// buffer is full the connection is closed (it reconnects and reads /history).
type hub struct {
	mu      sync.Mutex
	clients map[string]*wsClient
	closed  bool
}

type wsClient struct {
	out  chan wsFrame
	done chan struct{}
	once sync.Once
}

// wsFrame is a text (JSON) or binary (preview) message.
type wsFrame struct {
	binary bool
	data   []byte
}

const wsBuffer = 256

func newHub() *hub { return &hub{clients: map[string]*wsClient{}} }

// serve answers GET /ws?clientId=…: the status first, then the messages for that client (and
// the status changes sent to every client) until it goes away.
func (h *hub) serve(w http.ResponseWriter, r *http.Request, status func() any) {
	sid := r.URL.Query().Get("clientId")
	if sid == "" {
		sid = newID()
	}
	// Registered before the handshake answers: a client that posts its prompt the moment it is
	// connected hears every message of it (they wait in the buffer until the loop below runs).
	c := &wsClient{out: make(chan wsFrame, wsBuffer), done: make(chan struct{})}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		http.Error(w, "the server is stopping", http.StatusServiceUnavailable)
		return
	}
	if old := h.clients[sid]; old != nil { // the same client reconnecting: the old one goes
		old.stop()
	}
	h.clients[sid] = c
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if h.clients[sid] == c {
			delete(h.clients, sid)
		}
		h.mu.Unlock()
		c.stop()
	}()
	conn, err := websocket.Accept(w, r, nil) // same-origin browsers only (the library's check)
	if err != nil {
		return
	}
	ctx := conn.CloseRead(context.Background()) // a client sends nothing ComfyUI reads
	// The status first, then the client's messages as they come.
	for f := message("status", map[string]any{"status": status(), "sid": sid}); ; {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		typ := websocket.MessageText
		if f.binary {
			typ = websocket.MessageBinary
		}
		err := conn.Write(wctx, typ, f.data)
		cancel()
		if err != nil {
			return
		}
		select {
		case f = <-c.out:
		case <-ctx.Done():
			return
		case <-c.done:
			conn.Close(websocket.StatusGoingAway, "closed")
			return
		}
	}
}

// stop ends the client's connection (once).
func (c *wsClient) stop() { c.once.Do(func() { close(c.done) }) }

// push queues a frame without waiting; a full buffer closes the slow client.
func (c *wsClient) push(f wsFrame) {
	select {
	case c.out <- f:
	default:
		c.stop()
	}
}

// message is ComfyUI's JSON message {"type", "data"}.
func message(typ string, data any) wsFrame {
	b, _ := json.Marshal(map[string]any{"type": typ, "data": data})
	return wsFrame{data: b}
}

// preview is ComfyUI's binary preview frame: event 1 (PREVIEW_IMAGE), image type 2 (PNG), the
// image's bytes.
func preview(png []byte) wsFrame {
	b := make([]byte, 8, 8+len(png))
	binary.BigEndian.PutUint32(b[0:], 1)
	binary.BigEndian.PutUint32(b[4:], 2)
	return wsFrame{binary: true, data: append(b, png...)}
}

// send goes to one client ("" : every client).
func (h *hub) send(sid string, f wsFrame) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sid == "" {
		for _, c := range h.clients {
			c.push(f)
		}
		return
	}
	if c := h.clients[sid]; c != nil {
		c.push(f)
	}
}

// close ends every connection and refuses new ones.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, c := range h.clients {
		c.stop()
	}
}
