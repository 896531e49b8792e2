package studio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DialOptions say how to reach a hub.
type DialOptions struct {
	Role  Role
	Token string
	// Pin is the hub certificate's SHA-256 fingerprint (from the pairing) for a self-signed hub;
	// "" verifies a tls:// hub's certificate against the system's roots.
	Pin string
	// Name names this connection on the hub (the worker's name).
	Name string
	// OnEvent, when set, hears about disconnects and reconnects (one line each).
	OnEvent func(string)
}

// Conn is a connection to a hub with its JetStream context.
type Conn struct {
	NC *nats.Conn
	JS jetstream.JetStream
}

// Dial connects to the hub at url (nats://host:port, or tls://host:port for a hub with TLS). It
// keeps reconnecting after a drop, so a hub that sleeps for a while loses nobody.
func Dial(ctx context.Context, url string, o DialOptions) (*Conn, error) {
	away := &outage{say: o.OnEvent}
	opts := []nats.Option{
		nats.Name("easel-" + string(o.Role) + " " + o.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.Timeout(10 * time.Second),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			// a watcher's consumer that lapsed while the hub was away is made again by the
			// library: nothing for the user
			if o.OnEvent != nil && !errors.Is(err, nats.ErrConsumerNotActive) &&
				!strings.Contains(err.Error(), "consumer not active") {
				o.OnEvent(err.Error())
			}
		}),
	}
	if o.Token != "" {
		opts = append(opts, nats.UserInfo(string(o.Role), o.Token))
	}
	if o.Pin != "" {
		opts = append(opts, nats.Secure(pinnedTLS(o.Pin)))
	}
	if o.OnEvent != nil {
		opts = append(opts,
			nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
				if err != nil {
					away.begin(err)
				}
			}),
			nats.ReconnectHandler(func(*nats.Conn) { away.end() }),
			nats.ClosedHandler(func(*nats.Conn) { away.stop() }))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, explainDial(url, o, err)
	}
	return newConn(nc)
}

// explainDial says what a refused connection means and what to do.
func explainDial(url string, o DialOptions, err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, nats.ErrAuthorization) || strings.Contains(strings.ToLower(msg), "authorization"):
		if o.Token == "" {
			return fmt.Errorf("the hub at %s wants a token: give --token T (the one `easel studio hub` was started with)", url)
		}
		return fmt.Errorf("the hub at %s refused the token: check --token against the one `easel studio hub` was started with", url)
	case strings.Contains(msg, "TLS") || strings.Contains(msg, "tls") || strings.Contains(msg, "secure"):
		return fmt.Errorf("the hub at %s and this Mac disagree on TLS (%v): a hub on the network speaks TLS, so use tls://host:port with --pin FINGERPRINT (shown by `easel studio hub`)", url, err)
	case strings.Contains(msg, "fingerprint"):
		return fmt.Errorf("connecting to %s: %v", url, err)
	}
	return fmt.Errorf("cannot reach the hub at %s (%v): is `easel studio hub` running there, and is the address right?", url, err)
}

func newConn(nc *nats.Conn) (*Conn, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &Conn{NC: nc, JS: js}, nil
}

// Close closes the connection.
func (c *Conn) Close() { c.NC.Close() }

// outage says that the hub was lost, again every outageRepeat while it stays away, and when it
// is back.
type outage struct {
	say  func(string)
	mu   sync.Mutex
	quit chan struct{} // closed when the outage ends
}

// outageRepeat is how often a lasting outage is said again.
const outageRepeat = 30 * time.Second

func (o *outage) begin(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.quit != nil {
		return
	}
	since := time.Now()
	o.say(fmt.Sprintf("lost the hub (%v); reconnecting", err))
	quit := make(chan struct{})
	o.quit = quit
	go func() {
		t := time.NewTicker(outageRepeat)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				o.say(fmt.Sprintf("still cannot reach the hub (since %s, %s ago); trying every second", since.Format("15:04:05"), time.Since(since).Round(time.Second)))
			}
		}
	}()
}

func (o *outage) end() {
	if o.stop() {
		o.say("reconnected to the hub")
	}
}

// stop ends the repeating; it says whether an outage was on.
func (o *outage) stop() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.quit == nil {
		return false
	}
	close(o.quit)
	o.quit = nil
	return true
}
