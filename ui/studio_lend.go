package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app/activity"
	"easel/app/jobs"
	"easel/app/settings"
	macs "easel/app/studio"
	"easel/app/studiogen"
	"easel/engine/pipeline"

	"easel/ui/kit"

	"easel/ui/canvasarea"
	"easel/ui/remote"
)

// studioLend is Studio… → "Lend this Mac to a studio": the hub's address, token and pairing
// fingerprint, and while it is on, this window takes the studio's jobs (pipeline requests only,
// studiogen.Lend) when its own queue is idle, renders them with its own model and backend, and
// hands the job in hand back when the window closes or the Mac is about to sleep.
type studioLend struct {
	remote.HubFields
	check *widget.Check
	err   *widget.Label

	session *lendSession // the lending under way (nil: not lent)
	job     *lentJob     // the studio image being rendered here (nil: none); its queue row: studio_lend_row.go
	row     *lentRow
	events  []macs.WorkerEvent // what the worker did, for tests and the record
	// held, when a test sets it, hears each time Ready waits for the window's own queue (the
	// worker then has no pull waiting at the hub).
	held chan struct{}
}

// lendSession is one lending, from ticking the box to unticking it (or its refusal). Its worker
// goroutine outlives it: a worker handed its image back only once its render has stopped, so its
// last calls (an event, a picture, a refusal) reach the window after the lending ended, perhaps
// after a new one began. Each call checks it is still the window's session (lentDo) before it
// touches anything, so a lending's calls only ever change its own state.
type lendSession struct {
	at   string             // the hub's address
	stop context.CancelFunc // ends the lending: the job in hand goes back
	done chan struct{}      // closed when the worker has returned
}

// lentDo runs f on the window's thread if sess is still the lending under way, else drops it.
func (s *window) lentDo(sess *lendSession, f func()) {
	s.deps.Do(func() {
		if l := s.studioLend; l != nil && l.session == sess {
			f()
		}
	})
}

// lend is the window's lending state, made on first use.
func (s *window) lend() *studioLend {
	if s.studioLend == nil {
		l := &studioLend{HubFields: remote.NewHubFields(), err: remote.ErrorLabel()}
		s.fillHubFields(l.HubFields)
		l.check = widget.NewCheck("Lend this Mac to the studio", func(on bool) {
			if err := s.setLent(on); err != nil {
				l.check.SetChecked(false)
				l.err.SetText(err.Error())
				return
			}
			l.err.SetText("")
		})
		s.studioLend = l
	}
	return s.studioLend
}

// setLent joins the studio the form names as a worker, or leaves it (the job in hand goes back).
func (s *window) setLent(on bool) error {
	l := s.lend()
	if !on {
		s.stopLending()
		s.rememberStudioUse(func(st *settings.Studio) { st.Lend = false })
		return nil
	}
	if l.session != nil {
		return nil
	}
	url, token, pin, err := l.Read()
	if err != nil {
		return err
	}
	model, fp, err := s.studioModel("the studio sends this Mac only jobs of the same model file")
	if err != nil {
		return err
	}
	name, _ := os.Hostname()
	c, err := macs.Dial(context.Background(), url, macs.DialOptions{Role: macs.RoleWorker, Token: token, Pin: pin, Name: name})
	if err != nil {
		return errors.New(remote.PlainRemoteError(err, "The studio hub at "+url))
	}
	s.rememberStudio(l.HubFields, func(st *settings.Studio) { st.Lend = true })
	ctx, cancel := context.WithCancel(context.Background())
	sess := &lendSession{at: url, stop: cancel, done: make(chan struct{})}
	l.session = sess
	do := func(f func()) { s.lentDo(sess, f) }
	w := &studiogen.Lend{Name: name, Chip: runtime.GOARCH, Model: model, ModelHash: fp, Backend: string(s.deps.Settings.Backend),
		Gen: jobs.GeneratorFunc(func(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
			// The request of the image in hand (its prompt and seed, for its queue row).
			do(func() { s.lentRequest(req) })
			res, err := s.router.RunLocal(ctx, req, s.watchLent(sess, events))
			if err == nil && res != nil && res.Image != nil {
				framed, w, h := canvasarea.FrameFinal(res.Image), res.Width, res.Height
				do(func() { s.showLentPicture(framed, w, h, true) })
			}
			return res, err
		}),
		Ready: s.queueIdle, Hold: activity.Hold,
		OnStep: func(job *macs.Job, step, of int) {
			do(func() { s.lentStep(job, step, of) })
		},
		OnEvent: func(e macs.WorkerEvent) {
			do(func() {
				l.events = append(l.events, e)
				s.lentEvent(e)
			})
		}}
	go func() {
		defer close(sess.done)
		defer c.Close()
		// The whole model file is checked before the first job (once per file, as easel studio
		// join does): a damaged copy would return other pixels under the good fingerprint.
		checking := "Checking the model file before taking the studio's jobs (once per file)…"
		if err := studiogen.VerifyModelOnce(ctx, model, func() { do(func() { l.err.SetText(checking) }) }); err != nil {
			do(func() { s.refuseLending(remote.PlainLendRefusal(err, model)) })
			return
		}
		do(func() {
			if l.err.Text == checking {
				l.err.SetText("")
			}
		})
		if err := w.Run(ctx, c); err != nil {
			do(func() {
				s.refuseLending("Lending this Mac stopped: " + remote.PlainRemoteError(err, "the studio hub at "+url))
			})
		}
	}()
	s.showNetwork()
	return nil
}

// refuseLending ends the lending under way and says why under the unticked box (the box's
// callback clears the line, so the sentence is written after it).
func (s *window) refuseLending(why string) {
	l := s.lend()
	s.stopLending()
	l.check.SetChecked(false)
	l.err.SetText(why)
}

// queueIdle returns when the window's own queue has nothing queued or running (studiogen.Lend's
// Ready: the window's jobs come first).
func (s *window) queueIdle(ctx context.Context) error {
	changed := make(chan struct{}, 1)
	stop := s.queue.Watch(func(jobs.Update) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer stop()
	if s.queue.Pending() > 0 && s.studioLend != nil && s.studioLend.held != nil {
		select {
		case s.studioLend.held <- struct{}{}:
		default:
		}
	}
	for s.queue.Pending() > 0 {
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// stopLending leaves the studio: the job in hand is handed back at once.
func (s *window) stopLending() {
	l := s.studioLend
	if l == nil || l.session == nil {
		return
	}
	l.session.stop()
	l.session = nil
	s.setLentJob(nil)
}

// lentLine is the indicator's part while lent: "Lent to the studio at … · rendering image N".
func (s *window) lentLine() string {
	l := s.studioLend
	if l == nil || l.session == nil {
		return ""
	}
	line := "Lent to the studio at " + l.session.at
	if l.job != nil {
		line += fmt.Sprintf(" · rendering image %d", l.job.index+1)
	}
	return line
}

// form is the dialog's section.
func (l *studioLend) form() fyne.CanvasObject {
	return container.NewVBox(kit.Heading("Lend this Mac to a studio"), widget.NewForm(l.Items()...), l.check, l.err)
}

// closeLend hands the job in hand back (the window is closing) and waits for the worker to go.
func (s *window) closeLend() {
	l := s.studioLend
	if l == nil || l.session == nil {
		return
	}
	sess := l.session
	l.session = nil
	sess.stop()
	<-sess.done
}
