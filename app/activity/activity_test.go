package activity

import "testing"

// TestHoldEnds: Hold returns an end that may be called more than once (off macOS both do nothing;
// on a Mac the assertion shows in `pmset -g assertions` while held — not checked here).
func TestHoldEnds(t *testing.T) {
	end := Hold(Reason)
	end()
	end()
}

// TestKeepResponsiveKeepsNapOffButAllowsSleep: the responsive activity is Foundation's
// NSActivityUserInitiatedAllowingIdleSystemSleep (0xEFFFFF: darwinkit's
// ActivityUserInitiatedAllowingIdleSystemSleep), i.e. user-initiated without the idle-sleep bit;
// a job's Hold is NSActivityUserInitiated (0xFFFFFF) with it. Its end may be called twice.
func TestKeepResponsiveKeepsNapOffButAllowsSleep(t *testing.T) {
	if activityResponsive != 0xEFFFFF || activityUserInitiated != 0xFFFFFF {
		t.Fatalf("responsive %#x, user-initiated %#x", activityResponsive, activityUserInitiated)
	}
	if activityResponsive&activityIdleSystemSleepDisabled != 0 {
		t.Fatal("the responsive activity keeps the Mac from sleeping")
	}
	for _, r := range []string{LendingReason, HubReason, ServingReason} {
		end := KeepResponsive(r)
		end()
		end()
	}
}
