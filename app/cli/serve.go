package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"io"
	"log"
	"net/http"
	"path/filepath"
	"time"

	"easel/app/backend"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/preview"
	"easel/app/serve"
	"easel/app/settings"
	"easel/app/studiogen"
	"easel/engine/pipeline"
	"easel/kernels/device"
)

func init() {
	register(&Command{
		Name:    "serve",
		Usage:   "[--listen ADDR] [--model M.cmf] [--api-auth USER:PASS | --token T] [--tls-cert C --tls-key K] [flags]",
		Summary: "serve the AUTOMATIC1111 API (/sdapi/v1/…), OpenAI's images API and ComfyUI's routes so other tools can drive Easel",
		Run:     runServe,
	})
}

// serveListening is told the address easel serve listens on (a test connects to it).
var serveListening = func(addr string) {}

const serveUsage = `usage: easel serve [flags]

Serves the AUTOMATIC1111 web UI's API (/sdapi/v1/txt2img, img2img, progress, interrupt, skip,
options, sd-models, loras, samplers, schedulers, upscalers, extra-single-image,
extra-batch-images, memory, cmd-flags, png-info, and A1111's other routes, empty where Easel has
nothing of the kind: docs/A1111-API.md) on one queue: jobs run one at a time, in order. The
same port answers OpenAI's images API (/v1/images/generations, /v1/images/edits, /v1/models:
the --token is the API key) and ComfyUI's routes for clients that send a workflow (/prompt,
/history, /view, /ws, /object_info, ...).

  --listen ADDR       where to listen (default 127.0.0.1:7860, this machine only); any other
                      address needs --api-auth, --token or --allow-from, else easel serve
                      refuses to start
  --model M.cmf       the model (default: the app's); sd_model_checkpoint switches among the
                      .cmf files of its folder, by name
  --api-auth U:P      HTTP Basic credentials every request must carry (A1111's flag)
  --token T           a bearer token every request may carry instead (Authorization: Bearer T)
  --tls-cert FILE     serve HTTPS with this certificate (PEM) …
  --tls-key FILE      … and this key
  --backend B         auto, metal or cpu (default: the app's setting)
  --max-queue N       jobs waiting or running before requests get 503 + Retry-After (default 32)
  --max-body MB       the largest request body (default 256)
  --max-conns N       concurrent connections (default 64)
  --log-prompts       write prompts into the log (off: only their length)
  --allow-from NETS   networks let in without credentials, CIDR[,CIDR…] (like 192.168.1.0/24):
                      for clients that cannot send any; every other address needs --api-auth
                      or --token; with it alone, --listen 0.0.0.0:7860 is allowed
  --cors-allow-origins LIST     browser origins whose pages may call the API, comma-separated
                      (like http://localhost:3456), as A1111's flag; default: none
  --cors-allow-origin-regex RE  origins matching RE may too
  --no-save           refuse save_images (a request asking for it gets a warning); without it,
                      save_images: true saves into the app's output folder and history
  --upscalers DIR     the folder of learned upscalers (.pth, .safetensors) /sdapi/v1/upscalers lists
                      and extras and hr_upscaler use (default: the app's upscalers folder)
  --studio URL        render the jobs on a studio's Macs (easel studio hub) instead of here;
                      --studio-token T is the hub's token (default: --token), --studio-pin its
                      certificate fingerprint

LoRAs are named in the prompt as <lora:NAME:WEIGHT> and found in the app's LoRA folder by name;
no request field names a file.`

func runServe(args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Fprintln(stdout, serveUsage)
			return ExitOK
		}
	}
	f := flag.NewFlagSet("serve", flag.ContinueOnError)
	f.SetOutput(io.Discard)
	listen := f.String("listen", serve.DefaultListen, "")
	model := f.String("model", "", "")
	apiAuth := f.String("api-auth", "", "")
	token := f.String("token", "", "")
	cert := f.String("tls-cert", "", "")
	key := f.String("tls-key", "", "")
	backendFlag := f.String("backend", "", "")
	maxQueue := f.Int("max-queue", serve.DefaultMaxPending, "")
	maxBody := f.Int("max-body", serve.DefaultMaxBody>>20, "")
	maxConns := f.Int("max-conns", serve.DefaultMaxConns, "")
	logPrompts := f.Bool("log-prompts", false, "")
	allowFrom := f.String("allow-from", "", "")
	corsOrigins := f.String("cors-allow-origins", "", "")
	corsRegex := f.String("cors-allow-origin-regex", "", "")
	noSave := f.Bool("no-save", false, "")
	upscalersDir := f.String("upscalers", "", "")
	studioURL, studioToken, studioPin := f.String("studio", "", ""), f.String("studio-token", "", ""), f.String("studio-pin", "", "") // studio_serve.go
	if err := f.Parse(args); err != nil {
		fmt.Fprintf(stderr, "easel serve: %v\n\n%s\n", err, serveUsage)
		return ExitUsage
	}
	if f.NArg() > 0 {
		fmt.Fprintf(stderr, "easel serve: unexpected argument %q\n", f.Arg(0))
		return ExitUsage
	}
	var auth serve.Auth
	if *apiAuth != "" {
		u, p, err := serve.ParseAPIAuth(*apiAuth)
		if err != nil {
			fmt.Fprintf(stderr, "easel serve: %v\n", err)
			return ExitUsage
		}
		auth.User, auth.Pass = u, p
	}
	auth.Token = *token
	nets, err := serve.ParseAllowFrom(*allowFrom)
	if err != nil {
		fmt.Fprintf(stderr, "easel serve: %v\n", err)
		return ExitUsage
	}
	auth.AllowFrom = nets
	cors, err := serve.ParseCORS(*corsOrigins, *corsRegex)
	if err != nil {
		fmt.Fprintf(stderr, "easel serve: %v\n", err)
		return ExitUsage
	}
	if err := serve.Check(*listen, auth, *cert, *key); err != nil {
		fmt.Fprintf(stderr, "easel serve: %v\n", err)
		return ExitUsage
	}
	st := settings.Defaults()
	if store, err := settings.DefaultStore(); err == nil {
		if s, err := store.Load(); err == nil {
			st = s
		}
	}
	if *model == "" {
		*model = st.Model
	}
	if *model == "" {
		fmt.Fprintln(stderr, "easel serve: no model: give --model M.cmf (or set one up in the window first)")
		return ExitUsage
	}
	m, fl := openModel(*model)
	if fl != nil {
		fmt.Fprintf(stderr, "easel serve: %v\n", fl.err)
		return fl.code
	}
	fingerprint := modelFingerprint(m)
	m.Close()
	be := settings.Backend(*backendFlag)
	if be == "" {
		be = st.Backend
	}
	loraDir, _ := settings.LoRADir()
	lib, err := library(*upscalersDir)
	if err != nil && *upscalersDir != "" {
		fmt.Fprintf(stderr, "easel serve: %v\n", err)
		return ExitUsage
	}
	upscalersFlag := *upscalersDir
	if lib != nil {
		upscalersFlag = lib.Dir
	}
	var upscaleDevice device.Device // learned upscalers run on Metal when the backend does
	if be != settings.BackendCPU {
		if c, err := backend.Choose(be); err == nil {
			upscaleDevice = c.Device
		}
	}

	logger := log.New(stderr, "easel serve: ", log.LstdFlags)
	gen := &jobs.ModelGenerator{Path: *model, Backend: be}
	if dir, err := settings.Dir(); err == nil {
		// The first-use GPU self-test and kernel tuning, cached as for the window and generate;
		// their progress goes to the log (the first Metal job of a geometry takes longer).
		gen.SelfTestDir, gen.TuneDir = filepath.Join(dir, "selftest"), filepath.Join(dir, "tuning")
		gen.DiagnosticsDir = dir // the last job's record for `easel diagnose`
	}
	defer gen.Close()
	var queueGen jobs.Generator = gen
	var spread func([]pipeline.Request) func() // sends a request's images to the studio at once
	if *studioURL != "" {                      // the jobs render on the studio's Macs (studio_serve.go)
		sg, err := studiogen.New(*studioURL, cmp.Or(*studioToken, *token), *studioPin, fingerprint, func(s string) { logger.Print(s) })
		if err != nil {
			fmt.Fprintf(stderr, "easel serve: %v\n", err)
			return ExitFailure
		}
		defer sg.Close()
		queueGen, spread = sg, sg.Spread
	}
	queue := jobs.New(queueGen, func(u jobs.Update) {
		if u.Status != nil && u.Status.Line+u.Status.Notice != "" {
			logger.Printf("job %d: %s", u.Job.ID, u.Status.Line+u.Status.Notice)
		}
	})
	defer queue.Close()
	cache, err := preview.DefaultCache()
	if err != nil {
		cache = preview.Cache{}
	}
	calib := &preview.Calibrator{Cache: cache}
	calib.Start(*model)
	defer calib.Stop()

	var save func(*image.NRGBA, *imagefile.Settings) error
	if !*noSave {
		hist := history.New(st.OutputFolder)
		save = func(img *image.NRGBA, set *imagefile.Settings) error {
			_, err := hist.Save(img, set, time.Now())
			return err
		}
	}
	hashCache, checkpoints := "", ""
	if dir, err := settings.Dir(); err == nil {
		hashCache = filepath.Join(dir, "modelhash")
		checkpoints = filepath.Join(dir, "serve-checkpoints") // a client's retry after a restart resumes
	}
	var useModel func(string) // a request's own model, for its jobs only (not with --studio)
	if *studioURL == "" {
		useModel = gen.SetPath
	}
	srv, err := serve.New(serve.Config{
		Queue: queue, Model: *model, SetModel: func(p string) { gen.SetPath(p); calib.Start(p) }, UseModel: useModel, LoRADir: loraDir,
		Backend: be, Preview: calib.Render, Auth: auth, CORS: cors, Save: save, NoSave: *noSave, HashCache: hashCache,
		Checkpoints: checkpoints, MaxBody: int64(*maxBody) << 20, MaxPending: *maxQueue, MaxConns: *maxConns,
		LogPrompts: *logPrompts, Log: logger, Spread: spread, Upscalers: lib, UpscaleDevice: upscaleDevice,
		Flags: map[string]any{"listen": *listen, "model": *model, "backend": string(be), "tls": *cert != "",
			"max_queue": *maxQueue, "max_body_mb": *maxBody, "max_conns": *maxConns,
			"upscalers": upscalersFlag, "allow_from": *allowFrom, "cors_allow_origins": *corsOrigins, "cors_allow_origin_regex": *corsRegex, "no_save": *noSave},
	})
	if err != nil {
		fmt.Fprintf(stderr, "easel serve: %v\n", err)
		return ExitFailure
	}
	ln, err := srv.Listen(*listen, *cert, *key)
	if err != nil {
		fmt.Fprintf(stderr, "easel serve: %v\n", err)
		return ExitFailure
	}
	scheme := "http"
	if *cert != "" {
		scheme = "https"
	}
	logger.Printf("serving the A1111 API, OpenAI's images API (/v1) and ComfyUI's routes on %s://%s with %s (Ctrl-C stops)", scheme, ln.Addr(), *model)
	serveListening(ln.Addr().String())
	ctx, stop := interruptContext()
	defer stop()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "easel serve: %v\n", err)
			return ExitFailure
		}
	case <-ctx.Done():
		logger.Printf("stopping")
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		<-done
	}
	return ExitOK
}
