package studiogen

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"easel/app/checkpoint"
	"easel/app/jobs"
	"easel/app/studio"
)

// placements are where a job's images are on the studio: which Mac renders each and at which
// attempt. Each change is reported as the job's status line (jobs.ReportStatus), which the
// window's queue row shows and `easel serve` logs.
type placements struct {
	mu   sync.Mutex
	ctx  context.Context
	of   []string // per image: "" waiting, else "mac-1", "mac-2 (attempt 2)", "done on mac-1"
	last string
}

func newPlacements(ctx context.Context, n int) *placements {
	return &placements{ctx: ctx, of: make([]string, n)}
}

// note records what e says of its image and reports the line when it changed.
func (p *placements) note(e studio.Event, i int) {
	if p == nil || i < 0 || i >= len(p.of) {
		return
	}
	p.mu.Lock()
	switch e.Kind {
	case studio.EventTaken:
		p.of[i] = e.Worker
		if e.Attempt > 1 {
			p.of[i] = fmt.Sprintf("%s (attempt %d)", e.Worker, e.Attempt)
		}
	case studio.EventHandedBack:
		p.of[i] = "waiting (" + e.Worker + " left)"
	case studio.EventResult:
		p.of[i] = "done on " + e.Worker
		if e.Attempt > 1 {
			p.of[i] += fmt.Sprintf(" (attempt %d)", e.Attempt)
		}
	case studio.EventFailed:
		p.of[i] = "failed"
	default:
		p.mu.Unlock()
		return
	}
	line := PlacementLine(p.of)
	changed := line != p.last
	p.last = line
	p.mu.Unlock()
	if changed {
		jobs.ReportStatus(p.ctx, jobs.Status{Line: line})
	}
}

// PlacementLine is the images' places in one line: "Studio: image 1 on mac-1 · image 2 on mac-2
// (attempt 2) · image 3 waiting".
func PlacementLine(of []string) string {
	parts := make([]string, len(of))
	for i, w := range of {
		switch {
		case w == "":
			w = "waiting"
		case strings.HasPrefix(w, "done") || strings.HasPrefix(w, "waiting") || w == "failed":
		default:
			w = "on " + w
		}
		if len(of) == 1 {
			parts[i] = w
		} else {
			parts[i] = fmt.Sprintf("image %d %s", i+1, w)
		}
	}
	return "Studio: " + strings.Join(parts, " · ")
}

// ModelFingerprint is the identity of a model file that studio jobs carry (a worker takes only
// jobs of the model it has).
func ModelFingerprint(path string) (string, error) { return checkpoint.FingerprintFile(path) }
