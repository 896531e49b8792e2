package emu

import (
	"fmt"
	"os"
)

// RequiredEnv, set to 1, makes a missing emulator an error rather than a reason to skip: `make
// test` sets it, so the kernel and Metal-path tests can never be skipped silently in CI.
const RequiredEnv = "EASEL_REQUIRE_EMULATOR"

// unavailable passes err (which wraps ErrNoCompiler, the skip signal) through, unless the
// emulator is required, when it returns an error that no longer matches ErrNoCompiler.
func unavailable(err error) error {
	if os.Getenv(RequiredEnv) != "1" {
		return err
	}
	return fmt.Errorf("%v; %s=1 requires the emulator (make test installs clang)", err, RequiredEnv)
}
