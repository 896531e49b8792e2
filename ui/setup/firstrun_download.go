package setup

import (
	"context"
	"errors"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app/download"
	"easel/app/modelsetup"
	"easel/engine/convert"
)

// downloadPage shows the license and the sizes, then downloads (with Pause and Resume), converts
// and opens the official model.
type downloadPage struct {
	plan            *modelsetup.DownloadPlan
	status          *widget.Label
	license         *widget.Label
	sizes           *widget.Label
	accept          *widget.Check
	startButton     *widget.Button
	pauseButton     *widget.Button
	retryButton     *widget.Button
	bar             *widget.ProgressBar
	cancel          context.CancelFunc
	running, paused bool
	dest, out       string
	last            download.Progress // the latest download progress, for the Paused line
}

func (fr *firstRun) showDownload() {
	p := &downloadPage{}
	fr.dl = p
	title := heading("Download Qwen-Image-2.1")
	p.status = widget.NewLabel("Asking Hugging Face for the file list and the license…")
	p.status.Wrapping = fyne.TextWrapWord
	p.license = widget.NewLabel("")
	p.license.Wrapping = fyne.TextWrapWord
	licenseScroll := container.NewVScroll(p.license)
	licenseScroll.SetMinSize(fyne.NewSize(600, 220))
	p.sizes = widget.NewLabel("")
	p.sizes.Wrapping = fyne.TextWrapWord
	p.accept = widget.NewCheck("I have read the Qwen Research License and accept it (non-commercial use only)", func(on bool) {
		if on && p.plan != nil && !p.running {
			p.startButton.Enable()
		} else {
			p.startButton.Disable()
		}
	})
	p.accept.Disable()
	p.startButton = widget.NewButton("Download and convert", func() { fr.startDownload(p) })
	p.startButton.Importance = widget.HighImportance
	p.startButton.Disable()
	p.pauseButton = widget.NewButton("Pause", func() { fr.pauseOrResume(p) })
	p.pauseButton.Hide()
	p.retryButton = widget.NewButton("Try again", func() { fr.showDownload() })
	p.retryButton.Hide()
	p.bar = widget.NewProgressBar()
	p.bar.Hide()

	fr.show(container.NewBorder(
		container.NewVBox(title, widget.NewLabelWithStyle("License", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})),
		container.NewVBox(p.sizes, p.accept, p.bar, p.status,
			container.NewHBox(fr.backButton(), p.retryButton, p.pauseButton, p.startButton)),
		nil, nil, licenseScroll))

	remote := fr.remote
	go func() {
		plan, err := modelsetup.PlanDownload(context.Background(), remote, convert.ProfileCortiq)
		dest, destErr := modelsetup.DownloadsDir()
		out, outErr := modelsetup.DefaultModelPath(convert.ProfileCortiq)
		err = errors.Join(err, destErr, outErr)
		var free int64
		if err == nil {
			free, err = modelsetup.FreeBytes(dest)
		}
		fyne.Do(func() {
			if err != nil {
				p.status.SetText(fmt.Sprintf("Cannot prepare the download: %v", err))
				p.status.Importance = widget.DangerImportance
				p.status.Refresh()
				p.retryButton.Show()
				fr.jobDone()
				return
			}
			p.plan, p.dest, p.out = plan, dest, out
			p.license.SetText(plan.License)
			p.sizes.SetText(describePlan(plan, free))
			if free < plan.NeedBytes() {
				p.sizes.Importance = widget.WarningImportance
				p.sizes.Refresh()
			}
			p.status.SetText(fmt.Sprintf("The files go to %s; the model file to %s.", dest, out))
			p.accept.Enable()
			fr.jobDone()
		})
	}()
}

// describePlan states the download's size, the model file's and the free space.
func describePlan(plan *modelsetup.DownloadPlan, free int64) string {
	s := fmt.Sprintf("Download: %s in %d files. Model file after conversion: about %s. Needs %s in all; %s free.",
		modelsetup.FormatBytes(plan.Bytes), len(plan.Files), modelsetup.FormatBytes(plan.ModelBytes),
		modelsetup.FormatBytes(plan.NeedBytes()), modelsetup.FormatBytes(free))
	if free < plan.NeedBytes() {
		s += " Not enough space: free some before starting."
	}
	return s
}

// startDownload downloads, converts and checks in the background.
func (fr *firstRun) startDownload(p *downloadPage) {
	if p.plan == nil || !p.accept.Checked {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.running, p.paused = cancel, true, false
	fr.beginWork(cancel)
	p.startButton.Hide()
	p.retryButton.Hide()
	p.accept.Disable()
	p.pauseButton.SetText("Pause")
	p.pauseButton.Show()
	p.pauseButton.Enable()
	p.bar.Show()
	p.status.Importance = widget.MediumImportance
	p.status.SetText("Starting the download…")
	converting := false
	go func() {
		m, err := modelsetup.DownloadAndConvert(ctx, p.plan, p.dest, p.out,
			func(pr download.Progress) {
				line, f := modelsetup.DescribeDownload(pr), modelsetup.Fraction(pr.Bytes, pr.Total)
				fyne.Do(func() {
					p.last = pr
					p.bar.SetValue(f)
					p.status.SetText("Downloading: " + line)
				})
			},
			func(pr convert.Progress) {
				line, f := modelsetup.DescribeConversion(pr), modelsetup.Fraction(pr.BytesDone, pr.BytesTotal)
				fyne.Do(func() {
					if !converting {
						converting = true
						p.pauseButton.SetText("Cancel the conversion")
					}
					p.bar.SetValue(f)
					p.status.SetText("Converting: " + line)
				})
			})
		cancel()
		fyne.Do(func() {
			p.running, p.cancel = false, nil
			if fr.endWork() {
				return
			}
			p.pauseButton.Enable() // Pause disabled it while pausing
			switch {
			case err == nil:
				fr.useModel(m, p.dest)
			case errors.Is(err, context.Canceled) && converting:
				p.paused = true
				p.pauseButton.SetText("Convert again")
				p.status.SetText("Conversion cancelled; no model file was written. The download is kept.")
			case errors.Is(err, context.Canceled):
				p.paused = true
				p.pauseButton.SetText("Resume")
				p.status.SetText(pausedLine(p.last))
			default:
				p.paused = true
				p.pauseButton.SetText("Resume")
				p.status.SetText(fmt.Sprintf("The download stopped: %v. Resume continues where it stopped.", err))
				p.status.Importance = widget.DangerImportance
				p.status.Refresh()
			}
			fr.jobDone()
		})
	}()
}

// pauseOrResume pauses a running download (cancelling its context keeps the partial files) or
// resumes a paused one.
func (fr *firstRun) pauseOrResume(p *downloadPage) {
	if p.running {
		if p.cancel != nil {
			p.pauseButton.Disable()
			p.status.SetText("Pausing…")
			p.cancel()
		}
		return
	}
	if p.paused {
		fr.startDownload(p)
	}
}

// pausedLine says how far a paused download got and how it continues.
func pausedLine(last download.Progress) string {
	if last.Total == 0 {
		return "Paused. Resume continues where it stopped, also after quitting Easel."
	}
	return fmt.Sprintf("Paused at %s of %s (%d of %d files done). Resume continues where it stopped, also after quitting Easel.",
		modelsetup.FormatBytes(last.Bytes), modelsetup.FormatBytes(last.Total), last.Done, last.Files)
}
