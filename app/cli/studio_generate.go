package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"easel/app"
	"easel/app/imagefile"
	"easel/app/studio"
	"easel/app/studiogen"
)

// studioClientArgs takes --studio URL, --token T and --pin P out of a generate command line;
// ok says whether --studio was given.
func studioClientArgs(args []string) (url, token, pin string, rest []string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (name != "studio" && name != "token" && name != "pin") {
			rest = append(rest, a)
			continue
		}
		if !hasVal && i+1 < len(args) {
			i++
			val = args[i]
		}
		switch name {
		case "studio":
			url, ok = val, true
		case "token":
			token = val
		case "pin":
			pin = val
		}
	}
	return url, token, pin, rest, ok
}

// The generate flags whose value is a file (sent through the hub's inputs bucket), and those the
// client keeps to itself (each image's own seed replaces --seed and --variation-seed).
var (
	studioFileFlags  = map[string]bool{"image": true, "init": true, "mask": true, "lora": true}
	studioLocalFlags = map[string]bool{"count": true, "out": true, "seed": true, "variation-seed": true, "json": true,
		"verbose": true, "model": true, "backend": true}
	studioBoolFlags = map[string]bool{"json": true, "verbose": true, "lora-preset": true, "keep-original": true}
)

// runGenerateStudio is `easel generate --studio URL --token T …`: the batch is resolved here
// (seeds, file names, as a local batch's), each image goes to the studio as its own job, and
// each arriving image is written once.
func runGenerateStudio(url, token, pin string, args []string, stdout, stderr io.Writer) int {
	g, err := parseGenerateArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "easel generate: %v\n\n%s\n", err, generateUsage)
		return ExitUsage
	}
	out := newGenerateOutput(g.json, stdout, stderr)
	if g.from != "" {
		out.failed(fail(ExitUsage, "--from with --studio: give the settings as flags (easel generate --from runs on this Mac)"))
		return ExitUsage
	}
	d, seed, f := g.draft()
	if f != nil {
		out.failed(f)
		return f.code
	}
	job, err := d.Job(seed)
	if err != nil {
		out.failed(&failure{ExitSettings, err})
		return ExitSettings
	}
	req := job.Request
	paths := batchOutPaths(g.out, &req)
	for _, p := range paths {
		if f := checkWritable(p); f != nil {
			out.failed(f)
			return f.code
		}
	}
	model, f := openModel(g.model)
	if f != nil {
		out.failed(f)
		return f.code
	}
	fp := studio.Fingerprint{Easel: app.Version, Model: modelFingerprint(model)}
	model.Close()

	ctx, stop := interruptContext()
	defer stop()
	c, err := studio.Dial(ctx, url, studio.DialOptions{Role: studio.RoleClient, Token: token, Pin: pin,
		OnEvent: func(s string) { fmt.Fprintf(stderr, "easel generate: %s\n", s) }})
	if err != nil {
		out.failed(&failure{ExitFailure, err})
		return ExitFailure
	}
	defer c.Close()
	common, inputs, f := studioArgsFor(ctx, c, args)
	if f != nil {
		out.failed(f)
		return f.code
	}
	batch := studio.NewBatchID()
	fileBatch := imagefile.NewBatchID(time.Now(), 0, req.Seed)
	n := req.Batch()
	jobs := make([]*studio.Job, n)
	seeds := make([][2]uint64, n)
	for i := range n {
		s, v := req.ImageSeeds(i)
		seeds[i] = [2]uint64{s, v}
		a := append(append([]string{}, common...), "--seed", strconv.FormatUint(s, 10))
		if req.VariationStrength > 0 {
			a = append(a, "--variation-seed", strconv.FormatUint(v, 10))
		}
		data, _ := json.Marshal(studioRequest{Args: a, BatchID: fileBatch, Index: i, Count: n})
		jobs[i] = &studio.Job{Batch: batch, Index: i, Images: n, Fingerprint: fp, Request: data, Inputs: inputs}
	}
	enc := json.NewEncoder(stdout)
	say := func(ev studioEvent) {
		if g.json {
			enc.Encode(ev)
			return
		}
		if ev.Stage == "studio" && ev.Event != studio.EventProgress {
			fmt.Fprintf(stderr, "easel generate: image %d: %s\n", ev.Image, ev.text())
		}
	}
	written := 0
	start := time.Now()
	if g.json {
		enc.Encode(studioEvent{Stage: "studio", Event: "submitted", Batch: batch, Images: n})
	} else {
		fmt.Fprintf(stderr, "easel generate: studio batch %s: %d images (easel studio cancel %s %s takes it off the queue)\n", batch, n, url, batch)
	}
	err = c.Run(ctx, jobs, func(e studio.Event) {
		ev := studioEvent{Stage: "studio", Event: e.Kind, Image: e.Index + 1, Images: n, Worker: e.Worker, Attempt: e.Attempt,
			Step: e.Step, Steps: e.Steps, Detail: e.Detail}
		if e.Kind == studio.EventFailed {
			ev.Elapsed = time.Since(start).Seconds()
		}
		if e.Kind == studio.EventResult {
			if err := writeOnce(paths[e.Index], e.PNG); err != nil {
				ev.Event, ev.Detail = studio.EventFailed, err.Error()
				say(ev)
				return
			}
			written++
			seed := seeds[e.Index][0]
			ev = studioEvent{Stage: "saved", Path: paths[e.Index], Image: e.Index + 1, Images: n, Seed: &seed,
				Worker: e.Worker, Attempt: e.Attempt, Elapsed: time.Since(start).Seconds()}
			if req.VariationStrength > 0 {
				ev.VariationSeed = seeds[e.Index][1]
			}
			if !g.json {
				fmt.Fprintf(stdout, "%s (image %d/%d by %s, attempt %d)\n", paths[e.Index], e.Index+1, n, e.Worker, e.Attempt)
			}
		}
		say(ev)
	})
	switch {
	case errors.Is(err, context.Canceled):
		studioFailed(out, fail(ExitCancelled, "%v; %d of %d images were written", err, written, n), start)
		return ExitCancelled
	case err != nil:
		studioFailed(out, &failure{ExitFailure, err}, start)
		return ExitFailure
	}
	return ExitOK
}

// studioFailed reports a batch that ended in failure, with the time since it was submitted.
func studioFailed(out *generateOutput, f *failure, start time.Time) {
	fmt.Fprintf(out.stderr, "easel generate: %v\n", f.err)
	if out.json {
		out.enc.Encode(jsonEvent{Stage: "failed", Error: f.err.Error(), ExitCode: f.code, Elapsed: time.Since(start).Seconds()})
	}
}

// studioEvent is one --json line of a studio batch.
type studioEvent struct {
	Stage         string  `json:"stage"` // "studio" or "saved"
	Event         string  `json:"event,omitempty"`
	Path          string  `json:"path,omitempty"`
	Image         int     `json:"image"`
	Images        int     `json:"images"`
	Seed          *uint64 `json:"seed,omitempty"`
	VariationSeed uint64  `json:"variation_seed,omitempty"`
	Worker        string  `json:"worker,omitempty"`
	Attempt       int     `json:"attempt,omitempty"`
	Step          int     `json:"step,omitempty"`
	Steps         int     `json:"steps,omitempty"`
	Detail        string  `json:"detail,omitempty"`
	Batch         string  `json:"batch,omitempty"` // the studio's batch (on "submitted")
	// Elapsed is the time since the batch was submitted, on a saved or failed image.
	Elapsed float64 `json:"elapsed_s,omitempty"`
}

func (e studioEvent) text() string {
	return studiogen.EventText(studio.Event{Kind: e.Event, Worker: e.Worker, Attempt: e.Attempt, Detail: e.Detail})
}

// writeOnce writes a PNG through a temporary file and a rename, so a file is never half-written.
func writeOnce(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".easel-studio-*.png")
	if err != nil {
		return fmt.Errorf("saving %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("saving %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil { // as a local render's file
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("saving %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("saving %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

// studioArgsFor is the command line every image shares: the local-only flags removed and each
// file sent to the hub once (by SHA-256) and named by reference.
func studioArgsFor(ctx context.Context, c *studio.Conn, args []string) ([]string, []string, *failure) {
	var out, inputs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasVal && !studioBoolFlags[name] && i+1 < len(args) {
			i++
			val, hasVal = args[i], true
		}
		switch {
		case studioLocalFlags[name]:
			continue
		case studioFileFlags[name]:
			path, strength := val, ""
			if name == "lora" {
				if p, s, ok := strings.Cut(val, ":"); ok {
					if _, err := strconv.ParseFloat(s, 64); err == nil {
						path, strength = p, s
					}
				}
			}
			data, err := os.ReadFile(path)
			if err != nil {
				code := ExitImage
				if name == "lora" {
					code = ExitLoRA
				}
				return nil, nil, fail(code, "--%s %s cannot be read: %v", name, path, err)
			}
			obj, err := c.PutInput(ctx, data)
			if err != nil {
				return nil, nil, &failure{ExitFailure, err}
			}
			inputs = append(inputs, obj)
			ref := studioInputRef + obj + "|" + filepath.Base(path)
			if strength != "" {
				ref += "\x00" + strength
			}
			out = append(out, "--"+name, ref)
		case hasVal:
			out = append(out, "--"+name+"="+val)
		default:
			out = append(out, "--"+name)
		}
	}
	return out, inputs, nil
}
