package cli

import "strings"

// LaunchArgs is args (without the program name) less the arguments the OS adds when it launches
// an app bundle rather than a person typing a command: macOS's Finder passes `-psn_0_NNNN` (a
// process serial number) on the first launch of a downloaded app. Without this, that launch would
// be taken for an unknown subcommand and the app would quit silently (exit 2, to a stderr nobody
// sees) instead of opening its window. Applied on every platform so it is tested everywhere.
func LaunchArgs(args []string) []string {
	out := args[:0:0]
	for _, a := range args {
		if strings.HasPrefix(a, "-psn_") {
			continue
		}
		out = append(out, a)
	}
	return out
}
