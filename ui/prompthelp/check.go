package prompthelp

import (
	"context"
	"fmt"
	"image"
	"strings"

	"easel/app/jobs"
	"easel/app/textgen"
	"easel/engine/qwen3vl"
	"easel/ui/model"
)

// Finished is told of every finished job: when Check is on in Settings (CheckImages), a done
// picture is checked against the prompt that made it.
func (h *Panel) Finished(j jobs.Job) {
	if j.State != jobs.Done || j.Result == nil || j.Result.Image == nil {
		return
	}
	h.lastImage = j.Result.Image
	if h.host.Settings().CheckImages {
		h.checkPicture(j.Result.Image, j.Request.Prompt, fmt.Sprintf("job %d's image", j.ID), Key{Job: j.ID})
	}
}

// runCheckNow checks the picture shown (or the latest one) against the prompt as it is now.
func (h *Panel) runCheckNow() {
	img, err := h.shownImage()
	if err != nil {
		h.say("Check: %v", err)
		return
	}
	h.checkPicture(img, h.m.Draft().Prompt, "the picture shown", h.shownKey())
}

// checkPicture asks whether each element of prompt is in img and lists the answers under a line
// naming the image (what); when the canvas still shows the image (at), its caption sums them up.
func (h *Panel) checkPicture(img *image.NRGBA, prompt, what string, at Key) {
	var verdicts []textgen.Verdict
	h.write("Check", h.plan(len(prompt)*2, img), func(ctx context.Context, w *textgen.Writer, o textgen.Options) (*textgen.Result, error) {
		o.Sampling, o.OnText = qwen3vl.Sampling{}, nil // greedy: the answer does not depend on a seed
		v, r, err := w.Check(ctx, img, prompt, o)
		verdicts = v
		return r, err
	}, func(*textgen.Result) {
		var b strings.Builder
		fmt.Fprintf(&b, "Check of %s:\n", truncateRunes(what, 40))
		unsure := false
		for _, v := range verdicts {
			fmt.Fprintf(&b, "%s %s\n", v.Mark(), truncateRunes(v.Element, 48))
			unsure = unsure || !v.Answered
		}
		if unsure {
			h.m.Say(model.NoticeInfo, "In the Check, ? means the model answered neither yes nor no about that element: look for yourself.")
		}
		h.Checks.SetText(strings.TrimRight(b.String(), "\n"))
		h.Checks.Show()
		h.captionChecks(at, verdicts)
	})
}

// shownKey is the picture on the canvas now (the zero key when none is final).
func (h *Panel) shownKey() Key {
	now := h.host.Shown()
	switch {
	case !now.Final:
		return Key{}
	case now.Job != 0:
		return Key{Job: now.Job}
	}
	return Key{Path: now.Path}
}

// captionChecks sums a Check up in the canvas's caption ("Check: ✓ a heron · ✗ two reeds"),
// beside the picture, when the canvas still shows the image checked; the next picture shown
// clears it.
func (h *Panel) captionChecks(at Key, verdicts []textgen.Verdict) {
	if len(verdicts) == 0 || (at.Job == 0 && at.Path == "") {
		return
	}
	now := h.host.Shown()
	if !now.Final || (at.Job != 0 && at.Job != now.Job) || (at.Job == 0 && at.Path != now.Path) {
		return
	}
	parts := make([]string, len(verdicts))
	for i, v := range verdicts {
		parts[i] = v.Mark() + " " + truncateRunes(v.Element, 32)
	}
	h.host.SetCaption("Check: " + strings.Join(parts, " · "))
}

// truncateRunes shortens s to n characters with an ellipsis.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
