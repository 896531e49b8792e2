package remote

import (
	"strings"

	"easel/app/settings"
	"easel/ui/model"
)

// The Studio dialog remembers what it was given (settings.Studio: the hub's address and pairing,
// rendering on it, lending this Mac), the token in Deps.Secrets (the OS keychain where there is
// one), so the next launch starts from it: the fields filled in, and rendering or lending on
// again when it was on.

// rememberStudio keeps the fields' hub, pairing and token, with change applied to what is on.
func (w *Work) rememberStudio(f HubFields, change func(*settings.Studio)) {
	ns := w.sh.Settings()
	ns.Studio.Hub, ns.Studio.Pin = strings.TrimSpace(f.URL.Text), strings.TrimSpace(f.Pin.Text)
	change(&ns.Studio)
	w.keep(ns)
	if w.sh.Secrets == nil {
		return
	}
	note, err := w.sh.Secrets.Set(settings.SecretStudioToken, strings.TrimSpace(f.Token.Text))
	switch {
	case err != nil:
		w.say(model.NoticeWarning, "The studio token was not remembered for next time (%v): enter it again after a relaunch.", err)
	case note != "":
		w.say(model.NoticeInfo, "%s.", upperFirst(note))
	}
}

// rememberStudioUse records that rendering on the studio or lending was turned off.
func (w *Work) rememberStudioUse(change func(*settings.Studio)) {
	ns := w.sh.Settings()
	before := ns.Studio
	change(&ns.Studio)
	if ns.Studio == before {
		return
	}
	w.keep(ns)
}

// fillHubFields puts the remembered hub, pairing and token in a section's fields.
func (w *Work) fillHubFields(f HubFields) {
	st := w.sh.Settings().Studio
	f.URL.SetText(st.Hub)
	f.Pin.SetText(st.Pin)
	if w.sh.Secrets != nil && st.Hub != "" {
		if token, err := w.sh.Secrets.Get(settings.SecretStudioToken); err == nil {
			f.Token.SetText(token)
		} else {
			w.say(model.NoticeWarning, "%v", err)
		}
	}
}

// ResumeStudio turns rendering on the studio and lending back on at launch when they were on
// (a hub that is not there says so in the Studio dialog and the notice, and the setting stays
// for the next launch).
func (w *Work) ResumeStudio() {
	st := w.sh.Settings().Studio
	if st.Hub == "" {
		return
	}
	if st.Render {
		if err := w.setRenderOnStudio(true); err != nil {
			w.say(model.NoticeError, "Rendering on the studio is not back on: %v", err)
		} else {
			w.RenderOn().Check.SetChecked(true)
		}
	}
	if st.Lend {
		if err := w.setLent(true); err != nil {
			w.say(model.NoticeError, "This Mac is not lent to the studio again: %v", err)
		} else {
			w.Lend().Check.SetChecked(true)
		}
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
