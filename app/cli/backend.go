package cli

import (
	"fmt"

	"easel/app/backend"
	"easel/app/settings"
)

// chooseBackend resolves --backend, or the app's backend setting when the flag is not given
// (auto when there are no settings, or they cannot be read: that is said with --verbose).
func chooseBackend(flagValue string, out *generateOutput) (*backend.Choice, *failure) {
	want := settings.Backend(flagValue)
	if flagValue == "" {
		want = settings.BackendAuto
		if st, err := settings.DefaultStore(); err == nil {
			if s, err := st.Load(); err == nil {
				want = s.Backend
			} else if out.verbose {
				fmt.Fprintf(out.stderr, "easel generate: the app's settings cannot be read (%v); using the auto backend\n", err)
			}
		}
	}
	c, err := backend.Choose(want)
	if err != nil {
		return nil, fail(ExitBackend, "--backend %s: %v", want, err)
	}
	return c, nil
}
