package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"text/tabwriter"
	"time"

	"easel/app"
	"easel/app/activity"
	"easel/app/settings"
	"easel/app/studio"
)

func init() {
	register(&Command{
		Name:    "studio",
		Usage:   "hub|join|status [flags]",
		Summary: "spread batches over several Macs: run a hub, join one, or see who renders what",
		Run:     runStudio,
	})
}

const studioUsage = `usage:
  easel studio hub [--listen 127.0.0.1:4222] [--token T [--worker-token W]] [--tls-cert C --tls-key K] [--data DIR]
                   [--model M.cmf] [--ack-wait 60s] [--queue 32] [--per-batch 8]
                   [--client-timeout 30s] [--max-age 24h] [--max-store BYTES]
      run the studio's queue (NATS JetStream, on disk under --data). Any address but loopback
      needs --token, and speaks TLS (--tls-cert/--tls-key, or a self-signed certificate whose
      fingerprint is printed: workers pin it with --pin). With --model the hub renders too.
      --worker-token: Macs that join present it (easel studio join --token W) and can then only
      take jobs and deliver results; --token is then the clients' alone.
      --queue: jobs in the queue at most (waiting or rendering); --per-batch: of one batch
      (more wait on their client, so batches share the queue); --client-timeout: a batch whose
      client is silent this long is dropped; --max-age: older jobs leave the queue;
      --max-store: bytes of the data folder's disk the hub may fill (default: 3/4 of its free
      space at start).
  easel studio join URL --token T --model M.cmf [--name NAME] [--backend B] [--pin FINGERPRINT]
      lend this Mac: take the hub's jobs for this model, one at a time, until Ctrl-C (which
      hands the job in hand back at once). The model file is verified first (as easel verify
      does; once per file, remembered by size and modification time).
  easel studio status URL --token T [--pin FINGERPRINT] [--json]
      the workers (name, model, state, job, step, images done), the batches waiting and the
      hub's disk
  easel studio cancel URL BATCH --token T [--pin FINGERPRINT]
      take a batch's jobs off the queue (its id is in easel studio status and in the client's
      first line)
  easel studio purge URL --token T [--pin FINGERPRINT]
      empty the queue and the results store: every client's waiting images

  easel generate --studio URL --token T [--pin FINGERPRINT] ...   render a batch on the studio`

func runStudio(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, studioUsage)
		return ExitOK
	}
	switch args[0] {
	case "hub":
		return runStudioHub(args[1:], stdout, stderr)
	case "join":
		return runStudioJoin(args[1:], stdout, stderr)
	case "status":
		return runStudioStatus(args[1:], stdout, stderr)
	case "cancel", "purge":
		return runStudioRemove(args[0], args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "easel studio: unknown subcommand %q: use hub, join, status, cancel or purge\n\n%s\n", args[0], studioUsage)
	return ExitUsage
}

// studioFlags parses a subcommand's flags, with the URL as the first argument when want is set.
func studioFlags(name string, args []string, wantURL bool, define func(*flag.FlagSet)) (string, *flag.FlagSet, error) {
	f := flag.NewFlagSet(name, flag.ContinueOnError)
	f.SetOutput(io.Discard)
	define(f)
	url := ""
	if wantURL {
		if len(args) == 0 || len(args[0]) == 0 || args[0][0] == '-' {
			return "", nil, fmt.Errorf("give the hub's address first, like nats://127.0.0.1:4222 (or tls://host:4222)")
		}
		url, args = args[0], args[1:]
	}
	if err := f.Parse(args); err != nil {
		return "", nil, err
	}
	if f.NArg() > 0 {
		return "", nil, fmt.Errorf("unexpected argument %q", f.Arg(0))
	}
	return url, f, nil
}

// studioInterrupt is cancelled by Ctrl-C, SIGTERM, or (for a worker) SIGHUP.
var studioInterrupt = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

func runStudioHub(args []string, stdout, stderr io.Writer) int {
	var cfg studio.HubConfig
	var model, backend string
	_, _, err := studioFlags("hub", args, false, func(f *flag.FlagSet) {
		f.StringVar(&cfg.Listen, "listen", "127.0.0.1:4222", "")
		f.StringVar(&cfg.Token, "token", "", "")
		f.StringVar(&cfg.WorkerToken, "worker-token", "", "")
		f.StringVar(&cfg.TLSCert, "tls-cert", "", "")
		f.StringVar(&cfg.TLSKey, "tls-key", "", "")
		f.StringVar(&cfg.Data, "data", "", "")
		f.StringVar(&model, "model", "", "")
		f.StringVar(&backend, "backend", "", "")
		f.DurationVar(&cfg.AckWait, "ack-wait", studio.DefaultAckWait, "")
		f.IntVar(&cfg.QueueLength, "queue", studio.DefaultQueueLength, "")
		f.IntVar(&cfg.PerBatch, "per-batch", studio.DefaultPerBatch, "")
		f.DurationVar(&cfg.ClientTimeout, "client-timeout", studio.DefaultClientTimeout, "")
		f.DurationVar(&cfg.MaxAge, "max-age", studio.DefaultMaxAge, "")
		f.Int64Var(&cfg.MaxStore, "max-store", 0, "")
	})
	if err != nil {
		fmt.Fprintf(stderr, "easel studio hub: %v\n\n%s\n", err, studioUsage)
		return ExitUsage
	}
	if cfg.Data == "" {
		dir, err := settings.Dir()
		if err != nil {
			fmt.Fprintf(stderr, "easel studio hub: %v; give --data DIR for the queue\n", err)
			return ExitUsage
		}
		cfg.Data = filepath.Join(dir, "studio")
	}
	cfg.Logf = func(format string, a ...any) {
		fmt.Fprintf(stderr, "easel studio hub: "+format+"\n", a...)
	}
	h, err := studio.StartHub(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "easel studio hub: %v\n", err)
		return ExitFailure
	}
	defer h.Close()
	fmt.Fprintf(stdout, "studio hub on %s (queue in %s: %s)\n", h.URL(), cfg.Data, h.Disk)
	studioHubListening(h.URL())
	if h.Fingerprint != "" {
		fmt.Fprintf(stdout, "pairing: certificate fingerprint %s (workers: --pin %s)\n", h.Fingerprint, h.Fingerprint)
	}
	ctx, stop := studioInterrupt()
	defer stop()
	if model != "" {
		if f := verifyModelOnce(ctx, model, stderr); f != nil {
			fmt.Fprintf(stderr, "easel studio hub: %v\n", f.err)
			return f.code
		}
		c, err := h.Connect(studio.RoleWorker)
		if err != nil {
			fmt.Fprintf(stderr, "easel studio hub: %v\n", err)
			return ExitFailure
		}
		defer c.Close()
		host, _ := os.Hostname()
		return joinAndRender(ctx, c, model, backend, host+"-hub", false, stdout, stderr)
	}
	<-ctx.Done()
	return ExitOK
}

// studioHubListening tells a test the hub's address (a no-op otherwise).
var studioHubListening = func(string) {}

func runStudioJoin(args []string, stdout, stderr io.Writer) int {
	var token, model, name, backend, pin string
	var asJSON bool
	url, _, err := studioFlags("join", args, true, func(f *flag.FlagSet) {
		f.StringVar(&token, "token", "", "")
		f.StringVar(&model, "model", "", "")
		f.StringVar(&name, "name", "", "")
		f.StringVar(&backend, "backend", "", "")
		f.StringVar(&pin, "pin", "", "")
		f.BoolVar(&asJSON, "json", false, "")
	})
	if err == nil && model == "" {
		err = fmt.Errorf("--model is required: the .cmf this Mac renders with (jobs for other models are left to other Macs)")
	}
	if err != nil {
		fmt.Fprintf(stderr, "easel studio join: %v\n\n%s\n", err, studioUsage)
		return ExitUsage
	}
	if name == "" {
		name, _ = os.Hostname()
	}
	ctx, stop := studioInterrupt()
	defer stop()
	if f := verifyModelOnce(ctx, model, stderr); f != nil {
		fmt.Fprintf(stderr, "easel studio join: %v\n", f.err)
		return f.code
	}
	c, err := studio.Dial(ctx, url, studio.DialOptions{Role: studio.RoleWorker, Token: token, Pin: pin, Name: name,
		OnEvent: func(s string) { fmt.Fprintf(stderr, "easel studio join: %s\n", s) }})
	if err != nil {
		fmt.Fprintf(stderr, "easel studio join: %v\n", err)
		return ExitFailure
	}
	defer c.Close()
	return joinAndRender(ctx, c, model, backend, name, asJSON, stdout, stderr)
}

// joinAndRender runs a worker on c until ctx ends; the job in hand is then handed back.
func joinAndRender(ctx context.Context, c *studio.Conn, model, backend, name string, asJSON bool, stdout, stderr io.Writer) int {
	r, f := newStudioRenderer(model, backend)
	if f != nil {
		fmt.Fprintf(stderr, "easel studio: %v\n", f.err)
		return f.code
	}
	if n := removeLeftoverJobDirs(); n > 0 {
		fmt.Fprintf(stderr, "easel studio: removed %d job folders left by workers that were killed\n", n)
	}
	enc := json.NewEncoder(stdout)
	w := &studio.Worker{Name: name, Chip: runtime.GOARCH, Model: baseName(model), Renderer: r, Hold: activity.Hold,
		Fingerprint: studio.Fingerprint{Easel: app.Version, Model: r.fingerprint},
		Kinds:       []string{studio.KindFlags, studio.KindPipeline}, // its renderer reads both
		OnEvent: func(e studio.WorkerEvent) {
			if asJSON {
				enc.Encode(e)
				return
			}
			fmt.Fprintf(stderr, "easel studio: %s %s/%d (attempt %d) %s\n", e.Kind, e.Batch, e.Index+1, e.Attempt, e.Detail)
		}}
	defer r.Close()
	if err := w.Run(ctx, c); err != nil {
		fmt.Fprintf(stderr, "easel studio: %v\n", err)
		return ExitFailure
	}
	return ExitOK
}

func runStudioStatus(args []string, stdout, stderr io.Writer) int {
	var token, pin string
	var asJSON bool
	url, _, err := studioFlags("status", args, true, func(f *flag.FlagSet) {
		f.StringVar(&token, "token", "", "")
		f.StringVar(&pin, "pin", "", "")
		f.BoolVar(&asJSON, "json", false, "")
	})
	if err != nil {
		fmt.Fprintf(stderr, "easel studio status: %v\n\n%s\n", err, studioUsage)
		return ExitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := studio.Dial(ctx, url, studio.DialOptions{Role: studio.RoleClient, Token: token, Pin: pin})
	if err != nil {
		fmt.Fprintf(stderr, "easel studio status: %v\n", err)
		return ExitFailure
	}
	defer c.Close()
	st, err := c.Status(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "easel studio status: %v\n", err)
		return ExitFailure
	}
	if st.Workers == nil {
		st.Workers = []studio.WorkerStatus{}
	}
	if asJSON {
		json.NewEncoder(stdout).Encode(st)
		return ExitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MAC\tMODEL\tSTATE\tJOB\tSTEP\tDONE")
	for _, w := range st.Workers {
		step := ""
		if w.State == studio.StateRendering {
			step = fmt.Sprintf("%d/%d", w.Step, w.Steps)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", w.Name, w.Model, w.State, w.Job, step, w.Done)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "%d Macs, %d images waiting\n", len(st.Workers), st.Queued)
	for _, b := range st.Batches {
		fmt.Fprintf(stdout, "batch %s: %d jobs in the queue\n", b.Batch, b.Jobs)
	}
	if st.Disk.Limit > 0 {
		fmt.Fprintf(stdout, "hub disk: %s used of its %s (%s free at start)\n",
			sizeText(st.Disk.Used), sizeText(uint64(st.Disk.Limit)), sizeText(st.Disk.FreeAtStart))
	}
	return ExitOK
}

// runStudioRemove is `easel studio cancel URL BATCH` and `easel studio purge URL`.
func runStudioRemove(verb string, args []string, stdout, stderr io.Writer) int {
	var token, pin string
	batch := ""
	if verb == "cancel" && len(args) >= 2 && len(args[1]) > 0 && args[1][0] != '-' {
		batch = args[1]
		args = append([]string{args[0]}, args[2:]...)
	}
	url, _, err := studioFlags(verb, args, true, func(f *flag.FlagSet) {
		f.StringVar(&token, "token", "", "")
		f.StringVar(&pin, "pin", "", "")
	})
	if err == nil && verb == "cancel" && batch == "" {
		err = fmt.Errorf("give the batch after the hub's address (easel studio status lists them)")
	}
	if err != nil {
		fmt.Fprintf(stderr, "easel studio %s: %v\n\n%s\n", verb, err, studioUsage)
		return ExitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := studio.Dial(ctx, url, studio.DialOptions{Role: studio.RoleClient, Token: token, Pin: pin})
	if err != nil {
		fmt.Fprintf(stderr, "easel studio %s: %v\n", verb, err)
		return ExitFailure
	}
	defer c.Close()
	var n int
	if verb == "cancel" {
		n, err = c.CancelBatch(ctx, batch)
	} else {
		n, err = c.Purge(ctx)
	}
	if err != nil {
		fmt.Fprintf(stderr, "easel studio %s: %v\n", verb, err)
		return ExitFailure
	}
	if verb == "cancel" {
		fmt.Fprintf(stdout, "batch %s: %d jobs taken off the queue\n", batch, n)
	} else {
		fmt.Fprintf(stdout, "the queue is empty: %d jobs taken off it, and the results store emptied\n", n)
	}
	return ExitOK
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' || p[i] == '\\' {
			return p[i+1:]
		}
	}
	return p
}
