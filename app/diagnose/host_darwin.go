//go:build darwin

package diagnose

/*
#include <sys/sysctl.h>
#include <stdint.h>
#include <stdlib.h>

static int easelSysctlString(const char *name, char *buf, size_t len) {
	return sysctlbyname(name, buf, &len, NULL, 0);
}

static int64_t easelSysctlInt64(const char *name) {
	int64_t v = 0;
	size_t len = sizeof(v);
	if (sysctlbyname(name, &v, &len, NULL, 0) != 0) return -1;
	return v;
}
*/
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"

	"easel/engine/objcsafe"
	"easel/engine/procmem"
)

func sysctlString(name string) string {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	buf := make([]byte, 256)
	if C.easelSysctlString(cname, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf))) != 0 {
		return ""
	}
	for i, b := range buf {
		if b == 0 {
			return string(buf[:i])
		}
	}
	return string(buf)
}

// hostInfo reads sysctl, task_info (engine/procmem) and NSProcessInfo.
func hostInfo() Host {
	cname := C.CString("hw.memsize")
	mem := int64(C.easelSysctlInt64(cname))
	C.free(unsafe.Pointer(cname))
	fp := procmem.Read()
	var thermal, version string
	objcsafe.WithPool(func() { // the version NSString is autoreleased; a Go thread has no pool
		pi := foundation.ProcessInfo_ProcessInfo()
		thermal = map[foundation.ProcessInfoThermalState]string{
			foundation.ProcessInfoThermalStateNominal: "nominal", foundation.ProcessInfoThermalStateFair: "fair",
			foundation.ProcessInfoThermalStateSerious: "serious", foundation.ProcessInfoThermalStateCritical: "critical",
		}[pi.ThermalState()]
		version = pi.OperatingSystemVersionString()
	})
	return Host{OS: runtime.GOOS, Arch: runtime.GOARCH, OSBuild: sysctlString("kern.osversion"),
		OSVersion: version, Chip: sysctlString("machdep.cpu.brand_string"),
		Cores: runtime.NumCPU(), PhysicalMemory: mem, Thermal: thermal, Footprint: fp.Now, PeakFootprint: fp.Peak}
}
