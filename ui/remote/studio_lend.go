package remote

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
)

// Lend is Studio… → "Lend this Mac to a studio": the hub's address, token and pairing
// fingerprint, and while it is on, this window takes the studio's jobs (pipeline requests only,
// studiogen.Lend) when its own queue is idle, renders them with its own model and backend, and
// hands the job in hand back when the window closes or the Mac is about to sleep.
type Lend struct {
	HubFields
	Check *widget.Check
	Err   *widget.Label

	session *LendSession // the lending under way (nil: not lent)
	// Job is the studio image being rendered here (nil: none); Row its queue row
	// (studio_lend_row.go).
	Job *LentJob
	Row *LentRow
	// Events is what the worker did, for tests and the record.
	Events []macs.WorkerEvent
	// Held, when a test sets it, hears each time Ready waits for the window's own queue (the
	// worker then has no pull waiting at the hub).
	Held chan struct{}
}

// LendSession is one lending, from ticking the box to unticking it (or its refusal). Its worker
// goroutine outlives it: a worker hands its image back only once its render has stopped, so its
// last calls (an event, a picture, a refusal) reach the window after the lending ended, perhaps
// after a new one began. Each call checks it is still the window's session (lentDo) before it
// touches anything, so a lending's calls only ever change its own state.
type LendSession struct {
	at   string             // the hub's address
	stop context.CancelFunc // ends the lending: the job in hand goes back
	done chan struct{}      // closed when the worker has returned
}

// Done is closed once the session's worker has returned (its last calls are then queued).
func (ls *LendSession) Done() <-chan struct{} { return ls.done }

// Session is the lending under way (nil: not lent).
func (l *Lend) Session() *LendSession { return l.session }

// lentDo runs f on the window's thread if sess is still the lending under way, else drops it.
func (w *Work) lentDo(sess *LendSession, f func()) {
	w.sh.Do(func() {
		if l := w.studioLend; l != nil && l.session == sess {
			f()
		}
	})
}

// Lend is the window's lending state, made on first use.
func (w *Work) Lend() *Lend {
	if w.studioLend == nil {
		l := &Lend{HubFields: NewHubFields(), Err: ErrorLabel()}
		w.fillHubFields(l.HubFields)
		l.Check = widget.NewCheck("Lend this Mac to the studio", func(on bool) {
			if err := w.setLent(on); err != nil {
				l.Check.SetChecked(false)
				l.Err.SetText(err.Error())
				return
			}
			l.Err.SetText("")
		})
		w.studioLend = l
	}
	return w.studioLend
}

// setLent joins the studio the form names as a worker, or leaves it (the job in hand goes back).
func (w *Work) setLent(on bool) error {
	l := w.Lend()
	if !on {
		w.stopLending()
		w.rememberStudioUse(func(st *settings.Studio) { st.Lend = false })
		return nil
	}
	if l.session != nil {
		return nil
	}
	url, token, pin, err := l.Read()
	if err != nil {
		return err
	}
	model, fp, err := w.studioModel("the studio sends this Mac only jobs of the same model file")
	if err != nil {
		return err
	}
	name, _ := os.Hostname()
	c, err := macs.Dial(context.Background(), url, macs.DialOptions{Role: macs.RoleWorker, Token: token, Pin: pin, Name: name})
	if err != nil {
		return errors.New(PlainRemoteError(err, "The studio hub at "+url))
	}
	w.rememberStudio(l.HubFields, func(st *settings.Studio) { st.Lend = true })
	ctx, cancel := context.WithCancel(context.Background())
	sess := &LendSession{at: url, stop: cancel, done: make(chan struct{})}
	l.session = sess
	do := func(f func()) { w.lentDo(sess, f) }
	lender := &studiogen.Lend{Name: name, Chip: runtime.GOARCH, Model: model, ModelHash: fp, Backend: string(w.sh.Settings().Backend),
		Gen: jobs.GeneratorFunc(func(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
			// The request of the image in hand (its prompt and seed, for its queue row).
			do(func() { w.lentRequest(req) })
			res, err := w.Router.RunLocal(ctx, req, w.watchLent(sess, events))
			if err == nil && res != nil && res.Image != nil {
				framed, width, height := w.sh.Frame(res.Image, true), res.Width, res.Height
				do(func() { w.showLentPicture(framed, width, height, true) })
			}
			return res, err
		}),
		Ready: w.queueIdle, Hold: activity.Hold,
		OnStep: func(job *macs.Job, step, of int) {
			do(func() { w.lentStep(job, step, of) })
		},
		OnEvent: func(e macs.WorkerEvent) {
			do(func() {
				l.Events = append(l.Events, e)
				w.lentEvent(e)
			})
		}}
	go func() {
		defer close(sess.done)
		defer c.Close()
		// The whole model file is checked before the first job (once per file, as easel studio
		// join does): a damaged copy would return other pixels under the good fingerprint.
		checking := "Checking the model file before taking the studio's jobs (once per file)…"
		if err := studiogen.VerifyModelOnce(ctx, model, func() { do(func() { l.Err.SetText(checking) }) }); err != nil {
			do(func() { w.refuseLending(PlainLendRefusal(err, model)) })
			return
		}
		do(func() {
			if l.Err.Text == checking {
				l.Err.SetText("")
			}
		})
		if err := lender.Run(ctx, c); err != nil {
			do(func() {
				w.refuseLending("Lending this Mac stopped: " + PlainRemoteError(err, "the studio hub at "+url))
			})
		}
	}()
	w.ShowNetwork()
	return nil
}

// refuseLending ends the lending under way and says why under the unticked box (the box's
// callback clears the line, so the sentence is written after it).
func (w *Work) refuseLending(why string) {
	l := w.Lend()
	w.stopLending()
	l.Check.SetChecked(false)
	l.Err.SetText(why)
}

// queueIdle returns when the window's own queue has nothing queued or running (studiogen.Lend's
// Ready: the window's jobs come first).
func (w *Work) queueIdle(ctx context.Context) error {
	q := w.sh.Queue
	changed := make(chan struct{}, 1)
	stop := q.Watch(func(jobs.Update) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer stop()
	if q.Pending() > 0 && w.studioLend != nil && w.studioLend.Held != nil {
		select {
		case w.studioLend.Held <- struct{}{}:
		default:
		}
	}
	for q.Pending() > 0 {
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// stopLending leaves the studio: the job in hand is handed back at once.
func (w *Work) stopLending() {
	l := w.studioLend
	if l == nil || l.session == nil {
		return
	}
	l.session.stop()
	l.session = nil
	w.setLentJob(nil)
}

// lentLine is the indicator's part while lent: "Lent to the studio at … · rendering image N".
func (w *Work) lentLine() string {
	l := w.studioLend
	if l == nil || l.session == nil {
		return ""
	}
	line := "Lent to the studio at " + l.session.at
	if l.Job != nil {
		line += fmt.Sprintf(" · rendering image %d", l.Job.Index+1)
	}
	return line
}

// form is the dialog's section.
func (l *Lend) form() fyne.CanvasObject {
	return container.NewVBox(kit.Heading("Lend this Mac to a studio"), widget.NewForm(l.Items()...), l.Check, l.Err)
}

// closeLend hands the job in hand back (the window is closing) and waits for the worker to go.
func (w *Work) closeLend() {
	l := w.studioLend
	if l == nil || l.session == nil {
		return
	}
	sess := l.session
	l.session = nil
	sess.stop()
	<-sess.done
}
