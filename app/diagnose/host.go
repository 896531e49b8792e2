package diagnose

// Host is what the report says about the machine: nothing personal (no user or host name, no
// paths).
type Host struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// OSBuild is macOS's build (kern.osversion, e.g. 24C101) or the kernel release elsewhere.
	OSBuild string `json:"os_build"`
	// OSVersion is NSProcessInfo's operatingSystemVersionString on macOS, the distribution's
	// PRETTY_NAME elsewhere.
	OSVersion string `json:"os_version,omitempty"`
	// Chip is machdep.cpu.brand_string (e.g. "Apple M4"), or /proc/cpuinfo's model name.
	Chip           string `json:"chip"`
	Cores          int    `json:"cores"`
	PhysicalMemory int64  `json:"physical_memory_bytes"`
	// Thermal is NSProcessInfo.thermalState on macOS (nominal, fair, serious, critical); empty
	// elsewhere.
	Thermal string `json:"thermal_state,omitempty"`
	// Footprint is this process's memory now: phys_footprint (task_info TASK_VM_INFO) on macOS,
	// the resident set elsewhere; PeakFootprint its peak (ledger_phys_footprint_peak on macOS,
	// VmHWM elsewhere, which a run resets at each stage's start where Linux allows it, so there it
	// is the peak since the last stage began). engine/procmem reads both.
	Footprint     int64 `json:"footprint_bytes"`
	PeakFootprint int64 `json:"peak_footprint_bytes"`
}

// HostBuild is the OS build (the self-test's key).
func HostBuild() string { return hostInfo().OSBuild }
