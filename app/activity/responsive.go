package activity

// Reasons the Mac shows (pmset -g assertions) while Easel waits for work others send it.
const (
	LendingReason = "Easel is lending this Mac to a studio"
	HubReason     = "Easel is hosting a studio hub"
	ServingReason = "Easel is serving images"
)

// NSActivityOptions bits (Foundation's NSProcessInfo.h): user-initiated work is the low 24 bits,
// one of which keeps the Mac from idle-sleeping.
const (
	activityIdleSystemSleepDisabled = 1 << 20
	activityUserInitiated           = 0x00FFFFFF | activityIdleSystemSleepDisabled
	// activityResponsive is NSActivityUserInitiatedAllowingIdleSystemSleep: App Nap stays off
	// (no timer coalescing or throttling of a background window) but the Mac may still sleep.
	activityResponsive = activityUserInitiated &^ activityIdleSystemSleepDisabled
)

// KeepResponsive begins an activity that keeps App Nap from throttling Easel while it waits for
// work others send (a window or worker lent to a studio, a hub, the HTTP server): without it a
// window in the background can be napped and answer late, or drop its studio connection. Idle
// system sleep stays allowed; a running job's Hold keeps the Mac awake. It returns the function
// that ends the activity (once; later calls do nothing). Elsewhere it does nothing.
func KeepResponsive(reason string) (end func()) { return begin(activityResponsive, reason) }
