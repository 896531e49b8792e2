package backend

import (
	"path/filepath"

	"easel/app"
	"easel/app/diagnose"
	"easel/app/settings"
	"easel/engine/ml/metal"
)

// RememberRecoveryPolicies makes the process's metal.Policies (the command-buffer level the GPU's
// watchdog let pass, per device) persist in the app-support folder's recovery/, keyed by the
// device, the OS build and this app version like the self-test's cache: a Mac whose watchdog
// needed one block per command buffer starts there in the next process instead of meeting the
// watchdog again. Without an app-support folder the levels last for the process.
func RememberRecoveryPolicies() {
	dir, err := settings.Dir()
	if err != nil {
		return
	}
	metal.Policies.Persist(filepath.Join(dir, metal.PolicyFolder), diagnose.HostBuild(), app.Version)
}
