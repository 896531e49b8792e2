package desktop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// runTimeout bounds a command that should finish at once (a clipboard tool hands the data to a
// background copy of itself and exits).
const runTimeout = 10 * time.Second

// runCommand runs c. Its output goes nowhere: clipboard tools leave a child serving the
// clipboard, and a pipe to it would never close. With wait false the program is started and
// reaped in the background (a file manager may stay open).
func runCommand(c Command, wait bool) error {
	var stdin *os.File
	if c.Stdin != "" {
		f, err := os.Open(c.Stdin)
		if err != nil {
			return fmt.Errorf("cannot read %s: %w", c.Stdin, err)
		}
		defer f.Close()
		stdin = f
	}
	if !wait {
		cmd := exec.Command(c.Name, c.Args...)
		if stdin != nil {
			cmd.Stdin = stdin
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		go cmd.Wait()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	return cmd.Run()
}
