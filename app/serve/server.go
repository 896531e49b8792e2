package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"image"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"easel/app/activity"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/settings"
	"easel/app/upscalers"
	"easel/engine/pipeline"
	"easel/kernels/device"
)

// Defaults of Config's limits.
const (
	DefaultListen      = "127.0.0.1:7860" // A1111's port, loopback only
	DefaultMaxBody     = 256 << 20        // bytes of one request body (ten base64 condition images of a few MB)
	DefaultMaxPending  = 32               // jobs queued or running before 503
	DefaultMaxConns    = 64               // concurrent connections
	DefaultHeaderWait  = 10 * time.Second // to read a request's header
	DefaultReadTimeout = 2 * time.Minute  // to read a whole request (header and body)
	DefaultIdleTimeout = 2 * time.Minute  // a keep-alive connection with no request
)

// Config is what a Server serves and how.
type Config struct {
	// Queue is the app's generation queue; the window passes its own so API jobs and its jobs
	// share it (FIFO, one GPU). Required.
	Queue *jobs.Queue
	// Model is the model file jobs run with now; Models is the folder sd_model_checkpoint
	// chooses among, by name ("" = Model's folder). SetModel switches the generator to another
	// file of that folder (nil: switching is refused).
	Model    string
	Models   string
	SetModel func(path string)
	// UseModel switches the generator's model file for the next job only, without anything else
	// SetModel does (override_settings.sd_model_checkpoint, a ComfyUI loader naming another
	// model): the server calls it as such a job starts and again with the current model once it
	// ends. Nil: a request cannot choose its own model (it is said in its warnings).
	UseModel func(path string)
	// LoRADir is where <lora:NAME:WEIGHT> finds NAME.safetensors.
	LoRADir string
	// Upscalers is the folder of learned upscalers /sdapi/v1/upscalers lists and extras and
	// hr_upscaler use (nil: the built-in resamplers only); UpscaleDevice is the Metal device they
	// run on (nil: the CPU).
	Upscalers     *upscalers.Library
	UpscaleDevice device.Device
	// Backend is what PNGs record as the backend setting.
	Backend settings.Backend
	// Preview renders each step's x0 for /progress's current_image (nil: no preview).
	Preview pipeline.PreviewFunc
	// Auth is the credentials every request must carry and the networks let in without them
	// (neither: only loopback may listen).
	Auth Auth
	// CORS is the browser origins whose pages may call the API (none: the default).
	CORS CORS
	// Save keeps an image a request asked to save (save_images) in the server's output folder
	// and history. Nil: the host keeps every image itself (the window saves its queue's jobs),
	// or, with NoSave, save_images is refused with a warning (easel serve --no-save).
	Save   func(img *image.NRGBA, set *imagefile.Settings) error
	NoSave bool
	// HashCache is a folder where the model files' short hashes are kept by name, size and
	// modification time ("": only in memory).
	HashCache string
	// Limits (0 takes the Default).
	MaxBody                              int64
	MaxPending, MaxConns                 int
	HeaderTimeout, ReadTimeout, IdleWait time.Duration
	// LogPrompts writes prompts into the log (off: a prompt is logged as its length).
	LogPrompts bool
	// Log receives one line per request (nil: nothing).
	Log *log.Logger
	// Flags are the command line as /cmd-flags reports it (credentials already left out).
	Flags map[string]any
	// Spread, when set, is told all of a request's per-image requests before they queue, so a
	// generator that renders elsewhere (`easel serve --studio`) can send them out at once and
	// each queue job only collects its image; release is called once the request is answered.
	Spread func(reqs []pipeline.Request) (release func())
	// Checkpoints is the folder running API jobs checkpoint into, so a client that sends the same
	// request again after the server restarted gets the picture resumed ("": off; resumable.go);
	// CheckpointGrace is how long ones left by an earlier run wait for that (0: the default).
	Checkpoints     string
	CheckpointGrace time.Duration
}

// Server answers the A1111 API over Config.Queue. Make one with New; Close stops watching the
// queue (it does not close the queue, which its owner closes).
type Server struct {
	cfg     Config
	handler http.Handler
	stop    func()

	models  *modelState
	tracker *tracker
	hashes  *hashes
	ck      *apiCheckpoints // resumable.go
	learned learnedCache    // learned.go

	mu     sync.Mutex
	httpSv *http.Server

	options  *postedOptions // options.go
	closing  atomic.Bool    // Shutdown or Close began: running requests keep their checkpoints
	shutters []func()       // the other APIs' Close (apis.go)
}

// New makes a server over cfg. It reads the model's defaults (absent sizes and steps) now, so a
// model file that cannot be read is an error here rather than in the first request.
func New(cfg Config) (*Server, error) {
	if cfg.Queue == nil {
		return nil, errors.New("serve: no queue to submit to")
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = DefaultHeaderWait
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.IdleWait <= 0 {
		cfg.IdleWait = DefaultIdleTimeout
	}
	if cfg.Log == nil {
		cfg.Log = log.New(io.Discard, "", 0)
	}
	models, err := newModelState(cfg.Model, cfg.Models, cfg.SetModel)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, models: models, tracker: newTracker(), hashes: newHashes(cfg.HashCache), options: newPostedOptions()}
	s.tracker.useModel, s.tracker.currentModel = cfg.UseModel, models.currentPath
	for _, p := range s.modelPaths() {
		s.hashes.lookup(p) // read in the background now, known by the first requests
	}
	s.stop = cfg.Queue.Watch(s.tracker.update)
	s.handler = s.routes()
	s.startCheckpoints()
	return s, nil
}

// Handler is the API as an http.Handler (authentication and the body cap included); tests serve
// it with httptest.
func (s *Server) Handler() http.Handler { return s.handler }

// Check refuses a listen address other than loopback without credentials, and a half-given TLS
// pair. `easel serve` and the window call it before listening.
func Check(addr string, auth Auth, certFile, keyFile string) error {
	if (certFile == "") != (keyFile == "") {
		return errors.New("give both --tls-cert and --tls-key, or neither")
	}
	if auth.Set() || len(auth.AllowFrom) > 0 {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %v (write it HOST:PORT, like 127.0.0.1:7860)", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("listening on %s would let other machines use this one without credentials: give --api-auth USER:PASS or --token TOKEN (and preferably --tls-cert/--tls-key), or --allow-from with the networks to let in (like 192.168.1.0/24), or listen on 127.0.0.1", addr)
}

// Listen opens addr after Check, capped at MaxConns concurrent connections; it returns the
// listener (its Addr has the real port when addr's was 0).
func (s *Server) Listen(addr, certFile, keyFile string) (net.Listener, error) {
	if err := Check(addr, s.cfg.Auth, certFile, keyFile); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	ln = limitListener(ln, s.cfg.MaxConns)
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("TLS certificate %s and key %s cannot be used: %v", certFile, keyFile, err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	return ln, nil
}

// Serve answers on ln until Shutdown; it returns http.ErrServerClosed after a shutdown.
func (s *Server) Serve(ln net.Listener) error {
	defer activity.KeepResponsive(activity.ServingReason)() // no App Nap while waiting for requests
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.HeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		IdleTimeout:       s.cfg.IdleWait,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	s.mu.Lock()
	s.httpSv = hs
	s.mu.Unlock()
	return hs.Serve(ln)
}

// Shutdown stops accepting, cancels the API's jobs (their clients get no answer) and waits for
// the handlers until ctx ends; then it stops watching the queue.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	s.closeAPIs()
	s.tracker.cancelAll(s.cfg.Queue)
	s.mu.Lock()
	hs := s.httpSv
	s.mu.Unlock()
	var err error
	if hs != nil {
		err = hs.Shutdown(ctx)
	}
	s.stop()
	return err
}

// Close stops watching the queue (a server used only through Handler).
func (s *Server) Close() {
	s.closing.Store(true)
	s.closeAPIs()
	s.tracker.cancelAll(s.cfg.Queue)
	s.stop()
	s.closeLearned()
}
