package setup

import (
	"context"
	"errors"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app/download"
	"easel/app/fastdraft"
	"easel/app/modelsetup"
	"easel/engine/lora"
)

// FastDraftPanel offers a published few-step LoRA for fast drafts: the artist picks one, sees its
// license and size (from the hub), accepts, and downloads it into the LoRA folder — resumable
// (Pause / Resume), checked against the hub's SHA-256, as the model download is. The first-run
// window's last page and the main window's LoRA panel both show it.
type FastDraftPanel struct {
	remote *download.Remote
	dir    string
	done   func(path string, p *lora.Preset)
	do     func(func())

	choice      *widget.Select
	note        *widget.Label
	ask         *widget.Button
	license     *widget.Label
	size        *widget.Label
	accept      *widget.Check
	startButton *widget.Button
	pauseButton *widget.Button
	bar         *widget.ProgressBar
	status      *widget.Label
	box         *fyne.Container
	intro       *widget.Label // what fast drafts are, in an artist's words

	plan    *fastdraft.Plan
	cancel  context.CancelFunc
	running bool
	// settled, when not nil, runs after a background step (the plan, the download) has ended and
	// the panel shows its outcome; tests wait on it.
	settled func()
}

// NewFastDraftPanel builds the panel. remote points at the hub (its BaseURL and Client; the
// repository is each LoRA's own), dir is the LoRA folder, done is called on the UI goroutine with
// the downloaded file and its preset, and do runs a function on the UI goroutine (fyne.Do).
func NewFastDraftPanel(remote *download.Remote, dir string, done func(path string, p *lora.Preset), do func(func())) *FastDraftPanel {
	if do == nil {
		do = fyne.Do
	}
	p := &FastDraftPanel{remote: remote, dir: dir, done: done, do: do}
	names := make([]string, len(fastdraft.Catalogue))
	for i, e := range fastdraft.Catalogue {
		names[i] = e.Name
	}
	p.note = widget.NewLabel("")
	p.note.Wrapping = fyne.TextWrapWord
	p.note.Importance = widget.LowImportance
	p.choice = widget.NewSelect(names, func(string) { p.chosen() })
	p.ask = widget.NewButton("Show its license and size", p.askHub)
	p.license = widget.NewLabel("")
	p.license.Wrapping = fyne.TextWrapWord
	p.size = widget.NewLabel("")
	p.size.Wrapping = fyne.TextWrapWord
	p.accept = widget.NewCheck("I have read its license and accept it", func(on bool) {
		if on && p.plan != nil && !p.running {
			p.startButton.Enable()
		} else {
			p.startButton.Disable()
		}
	})
	p.startButton = widget.NewButton("Download", p.start)
	p.startButton.Importance = widget.HighImportance
	p.pauseButton = widget.NewButton("Pause", p.pauseOrResume)
	p.bar = widget.NewProgressBar()
	p.status = widget.NewLabel("")
	p.status.Wrapping = fyne.TextWrapWord
	p.intro = widget.NewLabel("Fast drafts: a small add-on (a few-step LoRA) makes a draft in 4–8 steps instead of 40, five to ten times faster. Try ideas in Draft, then switch to Final for the finished image: all 40 steps, without the add-on.")
	p.intro.Wrapping = fyne.TextWrapWord
	licenseScroll := container.NewVScroll(p.license)
	licenseScroll.SetMinSize(fyne.NewSize(400, 120))
	p.box = container.NewVBox(p.intro, p.choice, p.note, p.ask, licenseScroll, p.size, p.accept, p.bar, p.status,
		container.NewHBox(p.pauseButton, p.startButton))
	p.choice.SetSelectedIndex(0)
	return p
}

// Object is the panel's widget tree.
func (p *FastDraftPanel) Object() fyne.CanvasObject { return p.box }

// entry is the chosen catalogue entry.
func (p *FastDraftPanel) entry() fastdraft.Published {
	return fastdraft.Catalogue[max(p.choice.SelectedIndex(), 0)]
}

// chosen resets the panel for the LoRA just chosen.
func (p *FastDraftPanel) chosen() {
	if p.running {
		return
	}
	e := p.entry()
	note := fmt.Sprintf("%s/%s — %s.", e.Repo, e.File, e.Preset.Describe())
	if e.SizeHint != "" {
		note += " Its card says " + e.SizeHint + "."
	}
	if e.Note != "" {
		note += " Not confirmed: " + e.Note + "."
	}
	p.note.SetText(note)
	p.plan = nil
	p.license.SetText("")
	p.size.SetText("")
	p.accept.SetChecked(false)
	p.accept.Disable()
	p.startButton.Disable()
	p.pauseButton.Hide()
	p.bar.Hide()
	p.status.SetText("")
	p.ask.Enable()
}

// askHub fetches the chosen LoRA's size, hash and license in the background.
func (p *FastDraftPanel) askHub() {
	e := p.entry()
	p.ask.Disable()
	p.status.SetText("Asking the hub for " + e.Repo + "'s license and the file's size…")
	go func() {
		plan, err := fastdraft.PlanDownload(context.Background(), p.remote, e)
		p.do(func() {
			p.ask.Enable()
			if err != nil {
				p.status.SetText(fmt.Sprintf("Cannot prepare the download: %v", err))
			} else if p.entry().Name == e.Name {
				p.plan = plan
				p.license.SetText(plan.License)
				p.size.SetText(plan.Describe(p.dir))
				p.status.SetText("")
				p.accept.Enable()
			}
			p.settle()
		})
	}()
}

// start downloads the planned LoRA (resuming a paused download).
func (p *FastDraftPanel) start() {
	if p.plan == nil || !p.accept.Checked || p.running {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.running = cancel, true
	plan := p.plan
	p.choice.Disable()
	p.accept.Disable()
	p.startButton.Disable()
	p.pauseButton.SetText("Pause")
	p.pauseButton.Enable()
	p.pauseButton.Show()
	p.bar.Show()
	p.status.SetText("Starting the download…")
	go func() {
		path, err := fastdraft.Download(ctx, plan, p.dir, func(pr download.Progress) {
			line, f := modelsetup.DescribeDownload(pr), modelsetup.Fraction(pr.Bytes, pr.Total)
			p.do(func() {
				p.bar.SetValue(f)
				p.status.SetText("Downloading: " + line)
			})
		})
		cancel()
		p.do(func() {
			p.running, p.cancel = false, nil
			p.choice.Enable()
			p.pauseButton.Enable()
			switch {
			case err == nil:
				p.bar.SetValue(1)
				p.pauseButton.Hide()
				p.status.SetText(fmt.Sprintf("Downloaded and verified: %s. It is in the LoRA list; Draft uses it.", path))
				if p.done != nil {
					pr := plan.Entry.Preset
					p.done(path, &pr)
				}
			case errors.Is(err, context.Canceled):
				p.pauseButton.SetText("Resume")
				p.status.SetText("Paused. Resume continues where it stopped, also after quitting Easel.")
			default:
				p.pauseButton.SetText("Resume")
				p.status.SetText(fmt.Sprintf("The download stopped: %v. Resume continues where it stopped.", err))
			}
			p.settle()
		})
	}()
}

// pauseOrResume pauses a running download (the partial file stays) or resumes a paused one.
func (p *FastDraftPanel) pauseOrResume() {
	if p.running {
		p.pauseButton.Disable()
		p.status.SetText("Pausing…")
		p.cancel()
		return
	}
	p.accept.SetChecked(true)
	p.start()
}

// Stop pauses a running download (the window holding the panel is closing).
func (p *FastDraftPanel) Stop() {
	if p.cancel != nil {
		p.cancel()
	}
}

func (p *FastDraftPanel) settle() {
	if p.settled != nil {
		p.settled()
	}
}

// The panel's controls, for tests of the windows that hold it.

// SelectForTest chooses catalogue entry i.
func (p *FastDraftPanel) SelectForTest(i int) { p.choice.SetSelectedIndex(i) }

// AskButton is "Show its license and size"; StartButton is "Download".
func (p *FastDraftPanel) AskButton() *widget.Button   { return p.ask }
func (p *FastDraftPanel) StartButton() *widget.Button { return p.startButton }

// Planned reports whether the license and the size are shown.
func (p *FastDraftPanel) Planned() bool { return p.plan != nil }

// LicenseText is the license shown.
func (p *FastDraftPanel) LicenseText() string { return p.license.Text }

// AcceptForTest ticks the license box.
func (p *FastDraftPanel) AcceptForTest() { p.accept.SetChecked(true) }
