package recipe

import (
	"fmt"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/settings"

	"easel/ui/model"
)

// OptionsActions are what the everyday options ask of the shell: SetBackend records the backend
// (the settings, the generator, the budget); ChooseModel opens the model chooser; FollowedSize is
// the output size while it follows the start image (ok false: it does not); Copy puts text on the
// clipboard (false: there is none). MaxCount is the largest batch.
type OptionsActions struct {
	SetBackend   func(settings.Backend)
	ChooseModel  func()
	FollowedSize func() (w, h int, ok bool)
	Copy         func(text string) bool
	MaxCount     int
}

// Options are the everyday settings under the prompt — size, steps, images, CFG, seed — and,
// under Advanced, the backend and the model. They show the model's draft as it changes and set it
// through the model's actions as they are edited; a value typed wrong is said in the notice until
// it is right again (the draft keeps the last right one).
type Options struct {
	Box      fyne.CanvasObject // the everyday settings
	Advanced *widget.Form      // backend and model

	SizeSelect *widget.Select
	ScaleRadio *widget.RadioGroup
	CustomW    *Entry
	CustomH    *Entry
	Steps      *Entry
	Count      *Entry // the batch's images, 1–MaxCount
	CFG        *widget.Slider
	SeedMode   *widget.RadioGroup
	SeedEntry  *Entry
	LastSeed   *widget.Label
	Backend    *widget.Select

	form       *widget.Form
	customRow  fyne.CanvasObject
	SizeResult *widget.Label
	cfgLabel   *widget.Label
	copySeed   *widget.Button
	modelLabel *widget.Label
	last       *uint64 // the seed the last run used, once there is one

	m        *model.Window
	act      OptionsActions
	shown    *compose.Draft    // the draft as the widgets last showed it (nil: not yet)
	loading  bool              // true while show sets widgets, so their callbacks do not echo back
	problems map[string]string // what is wrong with each field now, by its name
}

// NewOptions builds the options over m's draft; its entries answer keys.
func NewOptions(m *model.Window, keys Keys, act OptionsActions) *Options {
	p := &Options{m: m, act: act, problems: map[string]string{}}
	p.SizeSelect = widget.NewSelect(sizeNames(), p.sizeChosen)
	p.ScaleRadio = widget.NewRadioGroup([]string{"1K", "2K"}, func(v string) {
		if p.loading {
			return
		}
		sc := compose.Scale1K
		if v == "2K" {
			sc = compose.Scale2K
		}
		m.SetScale(sc)
	})
	p.ScaleRadio.Horizontal, p.ScaleRadio.Required = true, true
	p.CustomW, p.CustomH = NewEntry(keys), NewEntry(keys)
	p.CustomW.OnChanged = func(string) { p.customChanged() }
	p.CustomH.OnChanged = func(string) { p.customChanged() }
	// Leaving a size field shows the size the run will use in it (snapped, or clamped to the
	// model's range), so the field never says one size while another is made.
	p.CustomW.OnBlur = func() { p.showEffective(p.CustomW, m.Draft().CustomW) }
	p.CustomH.OnBlur = func() { p.showEffective(p.CustomH, m.Draft().CustomH) }
	p.customRow = container.NewGridWithColumns(3, p.CustomW, widget.NewLabel("×"), p.CustomH)
	p.SizeResult = widget.NewLabel("")
	p.SizeResult.Truncation = fyne.TextTruncateEllipsis // one line in the form; a problem is said in full under Generate

	p.Steps = NewEntry(keys)
	p.Steps.OnChanged = p.whole("Steps", "Steps: give a whole number from 2 to 200.", 2, 200, m.SetSteps)
	p.Count = NewEntry(keys)
	p.Count.OnChanged = p.whole("Images", fmt.Sprintf("Images: give a whole number from 1 to %d.", act.MaxCount), 1, act.MaxCount, m.SetCount)
	p.cfgLabel = widget.NewLabel("")
	p.CFG = widget.NewSlider(1, 10)
	p.CFG.Step = 0.5
	p.CFG.OnChanged = func(v float64) {
		p.cfgLabel.SetText(cfgText(v))
		if !p.loading {
			m.SetCFG(v)
		}
	}
	p.buildSeed(keys)
	p.Backend = widget.NewSelect([]string{"Auto", "Metal", "CPU"}, func(v string) {
		if !p.loading && act.SetBackend != nil {
			act.SetBackend(map[string]settings.Backend{"Auto": settings.BackendAuto, "Metal": settings.BackendMetal, "CPU": settings.BackendCPU}[v])
		}
	})
	p.modelLabel = widget.NewLabel("")
	p.modelLabel.Truncation = fyne.TextTruncateEllipsis
	chooseModel := widget.NewButton("Choose…", func() {
		if act.ChooseModel != nil {
			act.ChooseModel()
		}
	})

	// The everyday settings in a compact block, always visible under the prompt; the backend and
	// the model under Advanced.
	p.form = widget.NewForm(
		widget.NewFormItem("Size", container.NewBorder(nil, nil, nil, p.ScaleRadio, p.SizeSelect)),
		widget.NewFormItem("", container.NewVBox(p.customRow, p.SizeResult)),
		widget.NewFormItem("Steps", container.NewGridWithColumns(3, p.Steps, widget.NewLabelWithStyle("Images", fyne.TextAlignTrailing, fyne.TextStyle{}), p.Count)),
		widget.NewFormItem("CFG scale", container.NewBorder(nil, nil, nil, p.cfgLabel, p.CFG)),
		widget.NewFormItem("Seed", container.NewBorder(nil, nil, p.SeedMode, nil, p.SeedEntry)),
		widget.NewFormItem("", container.NewBorder(nil, nil, nil, p.copySeed, p.LastSeed)),
	)
	p.Box = p.form
	p.Advanced = widget.NewForm(
		widget.NewFormItem("Backend", p.Backend),
		widget.NewFormItem("Model", container.NewBorder(nil, nil, nil, chooseModel, p.modelLabel)),
	)
	p.show(m.Draft())
	m.Observe(model.DraftChanged, func(model.Change) { p.show(m.Draft()) })
	m.Observe(model.CanvasChanged, func(model.Change) { p.RefreshSize() }) // the size may follow the start image
	return p
}

// buildSeed makes the seed's row: Random or Fixed, the fixed seed, and the last run's seed to copy.
func (p *Options) buildSeed(keys Keys) {
	p.SeedMode = widget.NewRadioGroup([]string{"Random", "Fixed"}, func(v string) {
		if p.loading {
			return
		}
		if v == "Fixed" {
			p.SeedEntry.Enable()
			if p.SeedEntry.Text == "" && p.last != nil {
				p.SeedEntry.SetText(strconv.FormatUint(*p.last, 10)) // sets the draft's seed
			}
		} else {
			p.SeedEntry.Disable()
		}
		p.m.SetRandomSeed(v != "Fixed")
	})
	p.SeedMode.Horizontal, p.SeedMode.Required = true, true
	p.SeedEntry = NewEntry(keys)
	p.SeedEntry.SetPlaceHolder("seed")
	p.SeedEntry.OnChanged = func(v string) {
		if p.loading {
			return
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			if v != "" {
				p.problem("Seed", fmt.Sprintf("Seed: give a whole number from 0 to %d.", uint64(1<<64-1)))
			}
			return
		}
		p.problem("Seed", "")
		p.m.SetSeed(n)
	}
	p.LastSeed = widget.NewLabel("Last seed: —")
	// A typed seed may have twenty digits: the line gives way (an ellipsis) rather than
	// widening the column; Copy copies it whole.
	p.LastSeed.Truncation = fyne.TextTruncateEllipsis
	p.copySeed = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() {
		if p.last != nil && p.act.Copy != nil && p.act.Copy(strconv.FormatUint(*p.last, 10)) {
			p.m.Say(model.NoticeWarning, "Seed %d copied.", *p.last)
		}
	})
	p.copySeed.Disable()
}

// whole is an entry's OnChanged for a whole number from lo to hi: set it, or say what is wrong.
func (p *Options) whole(field, wrong string, lo, hi int, set func(int)) func(string) {
	return func(v string) {
		if p.loading {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			p.problem(field, wrong)
			return
		}
		p.problem(field, "")
		set(n)
	}
}

func cfgText(v float64) string {
	if v <= 1 {
		return "1 (off)"
	}
	return fmt.Sprintf("%.1f", v)
}

// ShowLastSeed shows the seed a run used, for copying (and for Fixed to start from).
func (p *Options) ShowLastSeed(seed uint64) {
	p.last = &seed
	p.LastSeed.SetText(fmt.Sprintf("Last seed: %d", seed))
	p.copySeed.Enable()
}

// problem shows what is wrong with a field as it is typed, or, once it is right again, takes
// its notice away (validation never goes stale).
func (p *Options) problem(field, msg string) {
	if msg != "" {
		p.problems[field] = msg
		p.m.Say(model.NoticeWarning, "%s", msg)
		return
	}
	if old, ok := p.problems[field]; ok {
		delete(p.problems, field)
		if p.m.Notice().Text == old {
			p.m.Quiet()
		}
	}
}
