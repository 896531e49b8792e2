package progress

import (
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app/compose"
	"easel/app/memplan"
	"easel/app/settings"
	"easel/ui/model"
)

// Built alone on a window model: a 2K prediction that does not fit a 10 GB budget says so in
// the panel and the strip, and offers the largest size of its shape that fits; taking it makes
// the model's draft that custom size. A writing's memory then replaces the prediction in both.
func TestMemoryPanelAloneOffersTheSizeThatFits(t *testing.T) {
	test.NewTempApp(t)
	m := model.New(compose.NewDraft(settings.Defaults()))
	p := NewMemoryPanel(m)
	timing := NewTimingPanel(MemoryLabelWidth)
	strip := NewStrip(p, timing, test.NewTempWindow(t, p.Box))

	g, budget := memplan.PublishedGeometry(), int64(10e9)
	plan := memplan.Plan{Width: 2688, Height: 1536, CFG: true}
	pr := memplan.Predict(g, plan, budget)
	if pr.Fits() {
		t.Fatalf("the 2K prediction fits %s: the test needs one that does not", memplan.GB(budget))
	}
	w, h, ok := memplan.LargestFitting(g, plan, budget)
	if !ok {
		t.Fatal("no size of this shape fits the budget")
	}
	p.ShowPrediction(pr, plan, g)
	if !strings.HasPrefix(p.Title.Text, "Memory — predicted for 2688×1536") || !strings.HasPrefix(p.Verdict.Text, "Does not fit") {
		t.Errorf("title %q, verdict %q", p.Title.Text, p.Verdict.Text)
	}
	if text := strip.Memory.Text(); !strings.HasPrefix(text, "Predicted ") || !strings.HasSuffix(text, "does not fit") {
		t.Errorf("the strip says %q, want the predicted peak that does not fit", text)
	}
	if !p.UseSize.Visible() || p.UseSize.Text != fmt.Sprintf("Use %d×%d", w, h) {
		t.Fatalf("the size offered: %q (shown %v), want Use %d×%d", p.UseSize.Text, p.UseSize.Visible(), w, h)
	}
	test.Tap(p.UseSize)
	if d := m.Draft(); d.Size != compose.SizeCustom || d.CustomW != w || d.CustomH != h {
		t.Errorf("after Use: the draft's size is %v %d×%d, want custom %d×%d", d.Size, d.CustomW, d.CustomH, w, h)
	}

	need := memplan.PredictWriting(g, memplan.WritingPlan{PromptTokens: 80, MaxTokens: 300}, budget)
	p.ShowWriting("Expand", need)
	if p.Title.Text != "Memory — writing (Expand)" || p.UseSize.Visible() {
		t.Errorf("while writing: title %q, a size still offered %v", p.Title.Text, p.UseSize.Visible())
	}
	if text := strip.Memory.Text(); !strings.HasPrefix(text, "Writing "+memplan.GB(need.Peak)) {
		t.Errorf("while writing the strip says %q", text)
	}
}
