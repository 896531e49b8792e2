package studio

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	opts := []nats.Option{
		nats.Name("easel-" + string(o.Role) + " " + o.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.Timeout(10 * time.Second),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if o.OnEvent != nil {
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
					o.OnEvent(fmt.Sprintf("lost the hub (%v); reconnecting", err))
				}
			}),
			nats.ReconnectHandler(func(*nats.Conn) { o.OnEvent("reconnected to the hub") }))
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
