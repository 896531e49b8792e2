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
	// WorkerToken, when set (with Token, and different from it), is what workers present
	// instead: its holder can take jobs and deliver results, but not submit jobs or read others'
	// results; Token then opens a client's connection only.
	WorkerToken string
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
	// QueueLength is how many jobs the queue holds, waiting or rendering (0 →
	// DefaultQueueLength); a client with more waits for room. PerBatch is how many of them one
	// batch may hold (0 → DefaultPerBatch, at most QueueLength), so a long batch leaves room for
	// other clients' images, which then wait behind at most PerBatch of its own.
	QueueLength, PerBatch int
	// ClientTimeout: a batch whose client has not said it is alive for this long is dropped
	// from the queue (0 → DefaultClientTimeout); clients say so every third of it.
	ClientTimeout time.Duration
	// MaxAge: a job older than this leaves the queue (0 → DefaultMaxAge).
	MaxAge time.Duration
	// MaxStore is how many bytes of the data folder's disk the hub may fill (0 → three quarters
	// of its free space at start); the inputs and results stores are capped within it.
	MaxStore int64
	// Logf, when set, hears what the hub does on its own: jobs dropped, stores that failed.
	Logf func(format string, args ...any)
}

// Hub is a running hub: the embedded nats-server with JetStream and Easel's stream and buckets.
type Hub struct {
	srv *server.Server
	cfg HubConfig
	// Disk is the data folder's disk at start: its free space and the hub's share of it.
	Disk    DiskShare
	started time.Time
	stopJan func()
	// diskShort: the janitor warned that the disk has less free than the share's unused part
	diskShort bool
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
	if c.WorkerToken != "" && (c.Token == "" || c.WorkerToken == c.Token || len(c.WorkerToken) < minTokenLength) {
		return "", 0, false, fmt.Errorf("--worker-token needs --token, must differ from it and have at least %d characters (a random one: openssl rand -hex 16)", minTokenLength)
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
	if cfg.PerBatch <= 0 {
		cfg.PerBatch = DefaultPerBatch
	}
	cfg.PerBatch = min(cfg.PerBatch, cfg.QueueLength)
	if cfg.ClientTimeout <= 0 {
		cfg.ClientTimeout = DefaultClientTimeout
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return nil, fmt.Errorf("the hub's data folder %s: %w", cfg.Data, err)
	}
	disk, err := shareOfDisk(cfg.Data, cfg.MaxStore)
	if err != nil {
		return nil, err
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
		// the hub never fills its disk: JetStream refuses a write past this, where a full disk
		// would turn JetStream off
		JetStreamMaxStore: disk.Store,
	}
	h := &Hub{cfg: cfg, Disk: disk, started: time.Now()}
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
		opts.Users = studioUsers(cfg.Token, cfg.WorkerToken, h.hubSecret)
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
	if h.stopJan, err = h.startJanitor(); err != nil {
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
	caps := h.Disk.caps()
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:                 StreamName,
		Subjects:             []string{jobsPrefix + ">"},
		Retention:            jetstream.WorkQueuePolicy,
		MaxMsgs:              int64(h.cfg.QueueLength),
		MaxMsgsPerSubject:    int64(h.cfg.PerBatch),
		Discard:              jetstream.DiscardNew,
		DiscardNewPerSubject: true,
		MaxAge:               h.cfg.MaxAge,
		MaxBytes:             caps.jobs,
		Duplicates:           10 * time.Minute,
		Storage:              jetstream.FileStorage,
		Metadata: map[string]string{
			metaAckWait:       h.cfg.AckWait.String(),
			metaMaxDeliver:    strconv.Itoa(h.cfg.MaxDeliver),
			metaClientTimeout: h.cfg.ClientTimeout.String(),
			metaDiskFree:      strconv.FormatUint(h.Disk.Free, 10),
			metaStoreLimit:    strconv.FormatInt(h.Disk.Store, 10),
		},
	})
	if err != nil {
		return fmt.Errorf("the hub's job stream: %w", err)
	}
	for b, size := range map[string]int64{InputsBucket: caps.inputs, ResultsBucket: caps.results} {
		if _, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: b, TTL: 24 * time.Hour, MaxBytes: size, Storage: jetstream.FileStorage}); err != nil {
			return fmt.Errorf("the hub's %s bucket (%s): %w", b, sizeText(size), err)
		}
	}
	if _, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: WorkersBucket, TTL: statusTTL, Storage: jetstream.MemoryStorage}); err != nil {
		return fmt.Errorf("the hub's %s bucket: %w", WorkersBucket, err)
	}
	if _, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: BatchesBucket, TTL: h.cfg.ClientTimeout, Storage: jetstream.MemoryStorage}); err != nil {
		return fmt.Errorf("the hub's %s bucket: %w", BatchesBucket, err)
	}
	return nil
}

// Stream metadata keys: the hub's consumer settings, read by workers creating their consumer.
const (
	metaAckWait    = "easel.ack_wait"
	metaMaxDeliver = "easel.max_deliver"
	// metaClientTimeout is the hub's ClientTimeout: clients say they are alive every third.
	metaClientTimeout = "easel.client_timeout"
	// metaDiskFree is the data folder's free space at the hub's start (bytes), for the status.
	metaDiskFree = "easel.disk_free"
	// metaStoreLimit is the hub's share of that disk (bytes).
	metaStoreLimit = "easel.store_limit"
)

// connect is an in-process connection to the hub in a role.
func (h *Hub) connect(role Role) (*nats.Conn, error) {
	opts := []nats.Option{nats.InProcessServer(h.srv), nats.Name("easel-hub")}
	switch {
	case h.cfg.Token == "":
	case role == roleHub:
		opts = append(opts, nats.UserInfo(string(roleHub), h.hubSecret))
	case role == RoleWorker && h.cfg.WorkerToken != "":
		opts = append(opts, nats.UserInfo(string(role), h.cfg.WorkerToken))
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

// logf writes to the hub's log.
func (h *Hub) logf(format string, args ...any) {
	if h.cfg.Logf != nil {
		h.cfg.Logf(format, args...)
	}
}

// Close stops the hub; the queue stays on disk under Data.
func (h *Hub) Close() {
	if h.stopJan != nil {
		h.stopJan()
		h.stopJan = nil
	}
	if h.awake != nil {
		h.awake()
		h.awake = nil
	}
	if h.srv != nil {
		h.srv.Shutdown()
		h.srv.WaitForShutdown()
	}
}
