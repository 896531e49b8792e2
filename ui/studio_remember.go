package ui

import (
	"strings"

	"easel/app/settings"

	"easel/ui/remote"
)

// The Studio dialog remembers what it was given (settings.Studio: the hub's address and pairing,
// rendering on it, lending this Mac), the token in Deps.Secrets (the OS keychain where there is
// one), so the next launch starts from it: the fields filled in, and rendering or lending on
// again when it was on.

// rememberStudio keeps the fields' hub, pairing and token, with change applied to what is on.
func (s *window) rememberStudio(f remote.HubFields, change func(*settings.Studio)) {
	ns := s.deps.Settings
	ns.Studio.Hub, ns.Studio.Pin = strings.TrimSpace(f.URL.Text), strings.TrimSpace(f.Pin.Text)
	change(&ns.Studio)
	s.deps.Settings = ns
	s.persist()
	if s.deps.Secrets == nil {
		return
	}
	note, err := s.deps.Secrets.Set(settings.SecretStudioToken, strings.TrimSpace(f.Token.Text))
	switch {
	case err != nil:
		s.say("The studio token was not remembered for next time (%v): enter it again after a relaunch.", err)
	case note != "":
		s.sayKind(noticeInfo, "%s.", upperFirst(note))
	}
}

// rememberStudioUse records that rendering on the studio or lending was turned off.
func (s *window) rememberStudioUse(change func(*settings.Studio)) {
	ns := s.deps.Settings
	before := ns.Studio
	change(&ns.Studio)
	if ns.Studio == before {
		return
	}
	s.deps.Settings = ns
	s.persist()
}

// fillHubFields puts the remembered hub, pairing and token in a section's fields.
func (s *window) fillHubFields(f remote.HubFields) {
	st := s.deps.Settings.Studio
	f.URL.SetText(st.Hub)
	f.Pin.SetText(st.Pin)
	if s.deps.Secrets != nil && st.Hub != "" {
		if token, err := s.deps.Secrets.Get(settings.SecretStudioToken); err == nil {
			f.Token.SetText(token)
		} else {
			s.say("%v", err)
		}
	}
}

// resumeStudio turns rendering on the studio and lending back on at launch when they were on
// (a hub that is not there says so in the Studio dialog and the notice, and the setting stays
// for the next launch).
func (s *window) resumeStudio() {
	st := s.deps.Settings.Studio
	if st.Hub == "" {
		return
	}
	if st.Render {
		if err := s.setRenderOnStudio(true); err != nil {
			s.sayKind(noticeError, "Rendering on the studio is not back on: %v", err)
		} else {
			s.renderOn().check.SetChecked(true)
		}
	}
	if st.Lend {
		if err := s.setLent(true); err != nil {
			s.sayKind(noticeError, "This Mac is not lent to the studio again: %v", err)
		} else {
			s.lend().check.SetChecked(true)
		}
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
