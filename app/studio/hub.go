package studio

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"easel/app/activity"
)

// HubConfig is how a hub runs.
type HubConfig struct {
	// Listen is host:port ("" → 127.0.0.1:4222; port 0 picks a free one). Any address but
	// loopback needs Token, and gets TLS (TLSCert/TLSKey, else a self-signed pair kept in Data).
	Listen string
	// Token is the shared secret workers and clients present (at least 16 characters); "" on
	// loopback leaves the hub open to this Mac's own processes, as `easel serve` is.
	Token string
	// TLSCert and TLSKey are PEM files; with neither, a non-loopback hub makes its own pair.
	TLSCert, TLSKey string
	// TLS speaks TLS on loopback too (the window's hub always does).
	TLS bool
	// Data is the folder of the JetStream file store: the queue survives a hub restart there.
	Data string
	// AckWait is how long a job may go without a word (progress or heartbeat) before it goes to
	// another worker (0 → DefaultAckWait). MaxDeliver caps deliveries (0 → DefaultMaxDeliver).
	AckWait    time.Duration
	MaxDeliver int
	// QueueLength is how many jobs may wait (0 → DefaultQueueLength); more are refused.
	QueueLength int
}

// Hub is a running hub: the embedded nats-server with JetStream and Easel's stream and buckets.
type Hub struct {
	srv *server.Server
	cfg HubConfig
	// Fingerprint is the SHA-256 of the hub's TLS certificate (hex, "" without TLS): the pairing
	// shows it and workers pin it (--pin).
	Fingerprint string
	hubSecret   string
	awake       func() // ends the App Nap activity held while the hub runs (activity.KeepResponsive)
}

// Token rules.
const minTokenLength = 16

// checkListen applies the security rules: loopback is open; any other address needs a token.
func (c *HubConfig) checkListen() (host string, port int, loopback bool, err error) {
	listen := c.Listen
	if listen == "" {
		listen = "127.0.0.1:4222"
	}
	h, p, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, false, fmt.Errorf("--listen %q: write it as host:port, like 127.0.0.1:4222", listen)
	}
	port, err = strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, false, fmt.Errorf("--listen %q: the port must be a number from 0 to 65535", listen)
	}
	loopback = h == "localhost"
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		loopback = true
	}
	if c.Token != "" && len(c.Token) < minTokenLength {
		return "", 0, false, fmt.Errorf("--token is %d characters: use at least %d (a random one: openssl rand -hex 16)", len(c.Token), minTokenLength)
	}
	if !loopback && c.Token == "" {
		return "", 0, false, fmt.Errorf("--listen %s opens the studio to the network: give --token T (at least %d random characters) so that only your Macs can join, or listen on 127.0.0.1", listen, minTokenLength)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return "", 0, false, errors.New("--tls-cert and --tls-key go together: give both, or neither for a self-signed certificate")
	}
	return h, port, loopback, nil
}

// StartHub starts the embedded server, waits until it takes connections and sets up the stream,
// the buckets and the consumers' settings.
func StartHub(cfg HubConfig) (*Hub, error) {
	host, port, loopback, err := cfg.checkListen()
	if err != nil {
		return nil, err
	}
	if cfg.Data == "" {
		return nil, errors.New("the hub needs a data folder (--data DIR) for its queue")
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = DefaultAckWait
	}
	if cfg.MaxDeliver <= 0 {
		cfg.MaxDeliver = DefaultMaxDeliver
	}
	if cfg.QueueLength <= 0 {
		cfg.QueueLength = DefaultQueueLength
	}
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return nil, fmt.Errorf("the hub's data folder %s: %w", cfg.Data, err)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		ServerName: "easel-hub",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   filepath.Join(cfg.Data, "jetstream"),
		NoSigs:     true,
		NoLog:      true,
		MaxPayload: 8 << 20,
	}
	h := &Hub{cfg: cfg}
	if cfg.TLSCert != "" || cfg.TLS || !loopback {
		tc, fp, err := hubTLS(cfg)
		if err != nil {
			return nil, err
		}
		opts.TLSConfig, opts.TLS, opts.TLSVerify = tc, true, false
		h.Fingerprint = fp
	}
	if cfg.Token != "" {
		var b [24]byte
		rand.Read(b[:])
		h.hubSecret = hex.EncodeToString(b[:])
		opts.Users = studioUsers(cfg.Token, h.hubSecret)
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("starting the hub: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("the hub did not start listening on %s:%d within 10 s (is the port taken?)", host, port)
	}
	h.srv = srv
	if err := h.setup(); err != nil {
		h.Close()
		return nil, err
	}
	h.awake = activity.KeepResponsive(activity.HubReason)
	return h, nil
}

// setup creates (or updates after a restart) the stream and buckets.
func (h *Hub) setup() error {
	nc, err := h.connect(roleHub)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       StreamName,
		Subjects:   []string{jobsPrefix + ">"},
		Retention:  jetstream.WorkQueuePolicy,
		MaxMsgs:    int64(h.cfg.QueueLength),
		Discard:    jetstream.DiscardNew,
		Duplicates: 10 * time.Minute,
		Storage:    jetstream.FileStorage,
		Metadata: map[string]string{
			metaAckWait:    h.cfg.AckWait.String(),
			metaMaxDeliver: strconv.Itoa(h.cfg.MaxDeliver),
		},
	})
	if err != nil {
		return fmt.Errorf("the hub's job stream: %w", err)
	}
	for _, b := range []string{InputsBucket, ResultsBucket} {
		if _, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: b, TTL: 24 * time.Hour, Storage: jetstream.FileStorage}); err != nil {
			return fmt.Errorf("the hub's %s bucket: %w", b, err)
		}
	}
	if _, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: WorkersBucket, TTL: statusTTL, Storage: jetstream.MemoryStorage}); err != nil {
		return fmt.Errorf("the hub's %s bucket: %w", WorkersBucket, err)
	}
	return nil
}

// Stream metadata keys: the hub's consumer settings, read by workers creating their consumer.
const (
	metaAckWait    = "easel.ack_wait"
	metaMaxDeliver = "easel.max_deliver"
)

// connect is an in-process connection to the hub in a role.
func (h *Hub) connect(role Role) (*nats.Conn, error) {
	opts := []nats.Option{nats.InProcessServer(h.srv), nats.Name("easel-hub")}
	switch {
	case h.cfg.Token == "":
	case role == roleHub:
		opts = append(opts, nats.UserInfo(string(roleHub), h.hubSecret))
	default:
		opts = append(opts, nats.UserInfo(string(role), h.cfg.Token))
	}
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to the hub in-process: %w", err)
	}
	return nc, nil
}

// URL is the address workers and clients connect to (tls:// when the hub has TLS).
func (h *Hub) URL() string {
	return h.srv.ClientURL()
}

// Connect is a Conn to the hub in-process (the hub rendering too, or the window on the hub's Mac).
func (h *Hub) Connect(role Role) (*Conn, error) {
	nc, err := h.connect(role)
	if err != nil {
		return nil, err
	}
	return newConn(nc)
}

// Close stops the hub; the queue stays on disk under Data.
func (h *Hub) Close() {
	if h.awake != nil {
		h.awake()
	}
	if h.srv != nil {
		h.srv.Shutdown()
		h.srv.WaitForShutdown()
	}
}
