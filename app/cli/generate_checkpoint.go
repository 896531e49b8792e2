package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"easel/app/activity"
	"easel/app/checkpoint"
	"easel/app/loralib"
	"easel/engine/cmf"
	"easel/engine/pipeline"
)

// ExitCheckpoint is easel generate --resume's exit code for a checkpoint that cannot be resumed:
// missing, damaged, of a newer format, or made with another model or other LoRAs.
const ExitCheckpoint = 15

// EveryStepEnv set to 1 makes --checkpoint write every step's state, the steps waiting for the
// disk (by default a step whose checkpoint would wait for the previous write skips it): for tests
// and scripts that stop a run after a chosen step.
const EveryStepEnv = "EASEL_CHECKPOINT_EVERY_STEP"

// checkpointRequest is what a checkpoint of easel generate records of its run: the command line.
// The seeds are the checkpoint's own fields (a random seed is drawn once).
type checkpointRequest struct {
	Args []string `json:"args"`
}

// fileFlags are the flags that name an input file; a checkpoint keeps their files by digest.
var fileFlags = []string{"image", "init", "mask", "from"}

// boolFlags are generate's flags that take no value.
var boolFlags = []string{"json", "verbose", "lora-preset", "keep-original"}

// walkArgs calls f with every flag of args, its value and where the value is (a value written
// --name=value is at the flag's own index, with inline set).
func walkArgs(args []string, f func(name, value string, at int, inline bool)) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name := strings.TrimLeft(a, "-")
		if n, v, ok := strings.Cut(name, "="); ok {
			f(n, v, i, true)
			continue
		}
		if slices.Contains(boolFlags, name) || i+1 >= len(args) {
			f(name, "", i, false)
			continue
		}
		f(name, args[i+1], i+1, false)
		i++
	}
}

// resumeArgs reads the checkpoint of easel generate --resume FILE [--out …] [--model M] [--json]
// [--verbose] [--backend B] and returns the run's command line to continue it: the recorded one,
// with the recorded seeds, each input file from its place or, gone or changed, from the copy
// beside the checkpoint (said on stderr), and the flags given now in place of the recorded ones.
func resumeArgs(args []string, stderr io.Writer) ([]string, *checkpoint.Checkpoint, *failure) {
	fs := flag.NewFlagSet("generate --resume", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	path := fs.String("resume", "", "")
	out := fs.String("out", "", "")
	model := fs.String("model", "", "")
	backend := fs.String("backend", "", "")
	asJSON := fs.Bool("json", false, "")
	verbose := fs.Bool("verbose", false, "")
	if err := fs.Parse(args); err != nil {
		return nil, nil, fail(ExitUsage, "%v (--resume takes only --out, --model, --backend, --json and --verbose beside it: the rest is the checkpoint's)", err)
	}
	if fs.NArg() > 0 {
		return nil, nil, fail(ExitUsage, "unexpected argument %q: --resume takes only --out, --model, --backend, --json and --verbose beside it", fs.Arg(0))
	}
	ck, err := checkpoint.Read(*path)
	if err != nil {
		return nil, nil, &failure{ExitCheckpoint, err}
	}
	var req checkpointRequest
	if err := json.Unmarshal(ck.Request, &req); err != nil || len(req.Args) == 0 {
		return nil, nil, fail(ExitCheckpoint, "checkpoint %s was not written by easel generate (it records no command line): resume it in the window", *path)
	}
	run := slices.Clone(req.Args)
	var bad error
	i := 0
	walkArgs(run, func(name, value string, at int, inline bool) {
		if !slices.Contains(fileFlags, name) || bad != nil {
			return
		}
		var f checkpoint.File
		for ; i < len(ck.Files); i++ {
			if ck.Files[i].Role == name && ck.Files[i].Path == value {
				f = ck.Files[i]
				break
			}
		}
		if f.SHA256 == "" {
			bad = fmt.Errorf("checkpoint %s keeps no copy of --%s %s: it is damaged; start the image again", *path, name, value)
			return
		}
		src, moved, err := checkpoint.Source(*path, f)
		if err != nil {
			bad = err
			return
		}
		if moved {
			fmt.Fprintf(stderr, "easel generate: %s is gone or changed since the run began; using the copy the checkpoint kept\n", value)
		}
		if inline {
			run[at] = "--" + name + "=" + src
		} else {
			run[at] = src
		}
	})
	if bad != nil {
		return nil, nil, &failure{ExitCheckpoint, bad}
	}
	run = append(run, "--seed", strconv.FormatUint(ck.Seed, 10), "--checkpoint", *path)
	if ck.VariationSeed != 0 || argSet(run, "variation-strength") {
		run = append(run, "--variation-seed", strconv.FormatUint(ck.VariationSeed, 10))
	}
	if *model != "" {
		run = append(run, "--model", *model)
	}
	if *out != "" {
		run = append(run, "--out", *out)
	}
	if *backend != "" {
		run = append(run, "--backend", *backend)
	}
	if *asJSON {
		run = append(run, "--json")
	}
	if *verbose {
		run = append(run, "--verbose")
	}
	return run, ck, nil
}

// argSet reports whether args give the flag name.
func argSet(args []string, name string) bool {
	set := false
	walkArgs(args, func(n, _ string, _ int, _ bool) { set = set || n == name })
	return set
}

// resumeFlagGiven reports whether args hold --resume.
func resumeFlagGiven(args []string) bool { return argSet(args, "resume") }

// checkpointer writes a generate run's checkpoints (--checkpoint FILE).
type checkpointer struct {
	w    *checkpoint.Writer
	base checkpoint.Checkpoint // the run's identity, inputs and request
	// firstPass are the first pass's final latents of every image, once a second pass runs.
	firstPass      [][]float32
	firstPassSteps int
	// unwatchSleep ends the flush on the Mac's sleep notice (app/activity).
	unwatchSleep func()
}

// newCheckpointer records the run (its command line, seeds, model, LoRAs and input files, a copy
// of each kept beside path) and writes its checkpoints to path; notices go to out.
func newCheckpointer(path string, args []string, req *pipeline.Request, model *cmf.File, modelPath string, loras []loralib.Applied, out *generateOutput) (*checkpointer, *failure) {
	js, err := json.Marshal(checkpointRequest{Args: args})
	if err != nil {
		return nil, &failure{ExitFailure, err}
	}
	c := &checkpointer{w: checkpoint.NewWriter(path)}
	c.base = checkpoint.Checkpoint{Model: checkpoint.Model{Path: modelPath, Fingerprint: modelFingerprint(model)},
		LoRAs: checkpointLoRAs(loras), Request: js, Seed: req.Seed, NoiseSeed: req.NoiseSeed, VariationSeed: req.VariationSeed}
	var bad *failure
	walkArgs(args, func(name, value string, _ int, _ bool) {
		if !slices.Contains(fileFlags, name) || bad != nil {
			return
		}
		data, err := os.ReadFile(value)
		if err != nil {
			bad = fail(ExitImage, "--%s %s cannot be read: %v", name, value, err)
			return
		}
		f, err := checkpoint.Store(path, name, value, data)
		if err != nil {
			// The folder cannot take the copies: the run goes on without checkpoints.
			out.notice(pipeline.Event{Notice: fmt.Sprintf("Checkpoints are off for this run: %v.", err)})
			c.w = nil
			return
		}
		c.base.Files = append(c.base.Files, f)
	})
	if bad != nil {
		return nil, bad
	}
	if c.w != nil {
		c.w.Notice = func(s string) { out.notice(pipeline.Event{Notice: s}) }
		c.w.Written = func(ck *checkpoint.Checkpoint) { out.checkpointWritten(path, ck) }
		c.w.EveryStep = os.Getenv(EveryStepEnv) == "1"
		// The Mac about to sleep: the newest state is written first (the sleep waits, bounded).
		w := c.w
		c.unwatchSleep = activity.OnWillSleep(func() { w.Flush(activity.FlushTimeout) })
		if err := activity.SleepNotices(); err != nil {
			out.notice(pipeline.Event{Notice: err.Error() + "."})
		}
	}
	return c, nil
}

// checkpointLoRAs are the applied LoRAs as a checkpoint records them.
func checkpointLoRAs(loras []loralib.Applied) []checkpoint.LoRA {
	var out []checkpoint.LoRA
	for _, a := range loras {
		out = append(out, checkpoint.LoRA{Path: a.File.Path, SHA256: a.File.SHA256, Strength: a.Strength})
	}
	return out
}

// onStep is the Request.OnStep of the pass (1, or 2 for the second pass of image of images): it
// offers the state to the writer, copying the run's buffers only when a write goes ahead.
func (c *checkpointer) onStep(pass, image, images int) func(pipeline.StepState) {
	if c == nil || c.w == nil {
		return nil
	}
	return func(s pipeline.StepState) {
		c.w.Offer(func() *checkpoint.Checkpoint {
			ck := c.base
			ck.Pass, ck.Step, ck.Steps, ck.Sigmas = pass, s.Step, s.Steps, slices.Clone(s.Sigmas)
			ck.Image, ck.Images = s.Image, s.Images
			if pass == 2 {
				ck.Image, ck.Images, ck.FirstPass, ck.FirstPassSteps = image, images, c.firstPass, c.firstPassSteps
			}
			ck.Latents = slices.Clone(s.Latents)
			for _, f := range s.Finished {
				ck.Finished = append(ck.Finished, slices.Clone(f))
			}
			return &ck
		})
	}
}

// done removes the checkpoint once every image is saved.
func (c *checkpointer) done() error {
	if c == nil || c.w == nil {
		return nil
	}
	c.unwatchSleep()
	return c.w.Remove()
}

// wait lets the write in flight finish (the run stopped; the last checkpoint stays).
func (c *checkpointer) wait() {
	if c != nil && c.w != nil {
		c.unwatchSleep()
		c.w.Wait()
	}
}

// resumeFirstPass is the first pass's Resume from ck: where it stopped, or, when the checkpoint is
// of a second pass, at the end of every image (decoded again, not denoised).
func resumeFirstPass(ck *checkpoint.Checkpoint) *pipeline.Resume {
	if ck.Pass == 1 {
		return &pipeline.Resume{Image: ck.Image, Step: ck.Step, Latents: ck.Latents, Finished: ck.Finished}
	}
	n := len(ck.FirstPass)
	return &pipeline.Resume{Image: n - 1, Step: ck.FirstPassSteps, Latents: ck.FirstPass[n-1], Finished: ck.FirstPass[:n-1]}
}

// checkResumable refuses a checkpoint of another model or other LoRAs.
func checkResumable(ck *checkpoint.Checkpoint, model *cmf.File, loras []loralib.Applied) *failure {
	if err := ck.Check(modelFingerprint(model), checkpointLoRAs(loras)); err != nil {
		return &failure{ExitCheckpoint, err}
	}
	return nil
}

// checkpointWritten reports a checkpoint in place: a --json "checkpoint" event (a test or a
// script may stop the run after it and resume).
func (o *generateOutput) checkpointWritten(path string, c *checkpoint.Checkpoint) {
	if !o.json {
		return
	}
	je := jsonEvent{Stage: "checkpoint", Path: path, Step: c.Step, Steps: c.Steps, Seed: &c.Seed, NoiseSeed: c.NoiseSeed, VariationSeed: c.VariationSeed}
	if c.Images > 1 {
		n := c.Image + 1
		je.Image, je.Images = &n, c.Images
	}
	if c.Pass > 1 {
		je.Pass = c.Pass
	}
	b, err := json.Marshal(je)
	if err == nil {
		o.stdout.Write(append(b, '\n'))
	}
}

// firstPassDone keeps the first pass's final latents for the second pass's checkpoints.
func (c *checkpointer) firstPassDone(results []*pipeline.Result) {
	if c == nil {
		return
	}
	c.firstPass = nil
	for _, r := range results {
		c.firstPass = append(c.firstPass, r.Latents)
	}
	c.firstPassSteps = results[0].StepsRun
}

// secondPassResume is the request of image i's second pass (of images): checkpointed, and
// continued from a second-pass checkpoint of that image; skip reports an image a resumed run
// saved before it stopped.
func secondPassResume(req pipeline.Request, ck *checkpoint.Checkpoint, c *checkpointer, i, images int) (pipeline.Request, bool) {
	req.Resume, req.OnStep = nil, c.onStep(2, i, images)
	if ck != nil && ck.Pass == 2 {
		if i < ck.Image {
			return req, true
		}
		if i == ck.Image {
			req.Resume = &pipeline.Resume{Step: ck.Step, Latents: ck.Latents}
		}
	}
	return req, false
}
