package cli

import (
	"context"
	"fmt"
	"io"

	"easel/app/studiogen"
)

// verifyModelOnce verifies the model file unless it was found sound at this size and time
// (studiogen.VerifyModelOnce); a file that does not open keeps openModel's message and exit code.
func verifyModelOnce(ctx context.Context, path string, stderr io.Writer) *failure {
	f, fl := openModel(path)
	if fl != nil {
		return fl
	}
	f.Close()
	err := studiogen.VerifyModelOnce(ctx, path, func() {
		fmt.Fprintf(stderr, "easel studio: verifying %s before joining (once per file)…\n", path)
	})
	if err != nil {
		return fail(ExitModelInvalid, "%v", err)
	}
	return nil
}
