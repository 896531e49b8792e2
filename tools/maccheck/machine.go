package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
)

// machine is what the report says of the computer: the OS and its build, the chip, the GPU's
// family and Metal version, the Go toolchain.
type machine struct {
	OS, OSVersion, OSBuild string
	Chip                   string
	GPUFamily              string // from easel diagnose (MTLDevice supportsFamily:), e.g. apple9
	Metal                  string // system_profiler's Metal support, e.g. "Metal 3"
	Go                     string
	Notes                  []string // a command that could not tell
}

// readMachine asks the OS (sw_vers and system_profiler on a Mac, uname elsewhere) through run.
func readMachine(run runner, goos string) machine {
	m := machine{OS: goos, Go: runtime.Version()}
	if goos != "darwin" {
		out, _, err := run(nil, "uname", "-srm")
		if err != nil {
			m.Notes = append(m.Notes, fmt.Sprintf("uname -srm: %v", err))
		}
		m.OSVersion = strings.TrimSpace(string(out))
		return m
	}
	out, _, err := run(nil, "sw_vers")
	if err != nil {
		m.Notes = append(m.Notes, fmt.Sprintf("sw_vers: %v", err))
	}
	for _, l := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "ProductVersion":
			m.OSVersion = "macOS " + strings.TrimSpace(v)
		case "BuildVersion":
			m.OSBuild = strings.TrimSpace(v)
		}
	}
	out, _, err = run(nil, "system_profiler", "SPDisplaysDataType", "-json")
	var sp struct {
		Displays []map[string]any `json:"SPDisplaysDataType"`
	}
	if err != nil || json.Unmarshal(out, &sp) != nil || len(sp.Displays) == 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("system_profiler SPDisplaysDataType -json gave no GPU (%v)", err))
		return m
	}
	gpu := sp.Displays[0]
	m.Chip, _ = gpu["sppci_model"].(string)
	if v, ok := gpu["spdisplays_mtlgpufamilysupport"].(string); ok {
		m.Metal = metalSupport(v)
	}
	return m
}

// metalSupport turns system_profiler's "spdisplays_metal3" into "Metal 3" (unknown values as given).
func metalSupport(v string) string {
	if rest, ok := strings.CutPrefix(v, "spdisplays_metal"); ok && rest != "" {
		return "Metal " + rest
	}
	return v
}

// gpuFamilyOf is the metal.gpu_family easel diagnose --json reports, "" when it has none.
func gpuFamilyOf(diagnose []byte) string {
	var d struct {
		Metal struct {
			GPUFamily string `json:"gpu_family"`
		} `json:"metal"`
	}
	if json.Unmarshal(diagnose, &d) != nil {
		return ""
	}
	return d.Metal.GPUFamily
}

// Line is the machine in one line of the report.
func (m machine) Line() string {
	var parts []string
	if m.OS == "darwin" {
		parts = append(parts, orUnknown(m.OSVersion)+" (build "+orUnknown(m.OSBuild)+")",
			"GPU "+orUnknown(m.Chip), "GPU family "+orUnknown(m.GPUFamily), orUnknown(m.Metal)+" support")
	} else {
		parts = append(parts, orUnknown(m.OSVersion), m.OS+" (not a Mac: no GPU figures)")
	}
	parts = append(parts, m.Go)
	return strings.Join(parts, "; ")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
