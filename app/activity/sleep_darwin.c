//go:build darwin

// The system power notices for app/activity (sleep_darwin.go): IOKit's IORegisterForSystemPower
// (Apple's Technical Q&A QA1340), delivered on a serial dispatch queue so that no run loop is
// needed (a command-line Easel has none).

#include <IOKit/IOKitLib.h>
#include <IOKit/IOMessage.h>
#include <IOKit/pwr_mgt/IOPMLib.h>
#include <dispatch/dispatch.h>
#include <stddef.h>

#include "_cgo_export.h"

// The root power domain's connection, for IOAllowPowerChange (kept for the life of the process).
static io_connect_t easelRootPort = MACH_PORT_NULL;

static void easelPowerCallback(void *refcon, io_service_t service, uint32_t messageType, void *messageArgument) {
	switch (messageType) {
	case kIOMessageCanSystemSleep:
		// An idle sleep may go ahead: a running job holds an activity assertion instead
		// (activity_darwin.go), which keeps this notice from coming at all.
		IOAllowPowerChange(easelRootPort, (long)messageArgument);
		break;
	case kIOMessageSystemWillSleep:
		// Not vetoable: the checkpoints are written first (each within FlushTimeout), then the
		// sleep is allowed. Unanswered, the Mac would wait 30 s.
		easelSystemPower(0);
		IOAllowPowerChange(easelRootPort, (long)messageArgument);
		break;
	case kIOMessageSystemHasPoweredOn:
		easelSystemPower(1);
		break;
	default:
		break; // kIOMessageSystemWillPowerOn, kIOMessageSystemWillNotSleep: nothing to answer
	}
}

int easelObserveSystemPower(void) {
	IONotificationPortRef port = NULL;
	io_object_t notifier = 0;
	easelRootPort = IORegisterForSystemPower(NULL, &port, easelPowerCallback, &notifier);
	if (easelRootPort == MACH_PORT_NULL) {
		return -1;
	}
	dispatch_queue_t queue = dispatch_queue_create("app.easel.system-power", DISPATCH_QUEUE_SERIAL);
	IONotificationPortSetDispatchQueue(port, queue);
	return 0;
}
