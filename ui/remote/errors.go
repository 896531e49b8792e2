package remote

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"strings"
	"syscall"

	"easel/app/serve/client"
	"easel/engine/cmf"
)

// PlainLendRefusal says why this Mac cannot lend its model file to a studio (the whole-file check
// before the first job, studiogen.VerifyModelOnce, failed): a damaged or incomplete copy would
// return other pixels than the other Macs', so it says to copy the file again; any other fault
// names the file and what to check.
func PlainLendRefusal(err error, model string) string {
	name := filepath.Base(model)
	switch {
	case errors.Is(err, cmf.ErrHash), errors.Is(err, cmf.ErrCorrupt), errors.Is(err, cmf.ErrTruncated):
		return fmt.Sprintf("This Mac cannot lend: the model file %s is damaged, so its images would differ from the other Macs'. "+
			"Copy it again from a sound copy (easel verify checks one), then lend this Mac again.", name)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("This Mac cannot lend: the model file %s cannot be read. Check that it is still there (Settings → Model), then lend this Mac again.", name)
	}
	var bad *cmf.Error
	if errors.As(err, &bad) {
		return fmt.Sprintf("This Mac cannot lend: the model file %s cannot be used (%s). Choose another in Settings, then lend this Mac again.", name, bad.Detail)
	}
	return "This Mac cannot lend: its model file could not be checked (" + err.Error() + "). Lend this Mac again to retry."
}

// PlainJobError is a failed job's error as the window says it: a job that rendered on another
// machine or a studio (where names it) says what went wrong there in plain words.
func PlainJobError(err error, where string) string {
	if where == "" {
		return err.Error()
	}
	return PlainRemoteError(err, where)
}

// PlainRemoteError says in the artist's words why another machine or a studio hub could not be
// used — what happened, where, and what to do — instead of Go's, the resolver's or the TLS
// library's text. An error already written for the artist (a refusal the other side explained)
// is kept as it is.
func PlainRemoteError(err error, where string) string {
	msg := strings.ToLower(err.Error())
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(msg, w) {
				return true
			}
		}
		return false
	}
	var dns *net.DNSError
	var said string
	switch {
	case errors.As(err, &dns) || has("no such host", "server misbehaving", "lookup "):
		said = fmt.Sprintf("%s could not be found on the network: check the address, and that both machines are on the same network", where)
	case errors.Is(err, syscall.ECONNREFUSED) || has("connection refused"):
		said = fmt.Sprintf("%s is not answering on that port: open Easel there and turn sharing on, or check the port number", where)
	case has("network is unreachable", "no route to host"):
		said = fmt.Sprintf("%s cannot be reached from this network: check that both machines are on the same network", where)
	case errors.Is(err, client.ErrServerGone):
		said = fmt.Sprintf("%s stopped answering during the job: it may have quit, gone to sleep or left the network", where)
	case has("i/o timeout", "deadline exceeded", "timed out", "timeout"):
		said = fmt.Sprintf("%s did not answer in time: check that it is awake and on the same network, then try again", where)
	case has("x509", "certificate", "tls:", "handshake"):
		said = fmt.Sprintf("%s's secure connection could not be checked: copy the pairing fingerprint again from the Studio dialog of the Mac that shares", where)
	case has("authorization", "unauthorized", "permissions violation", "bad token", "invalid token"):
		said = fmt.Sprintf("%s did not accept the token: copy it again from the machine that shares", where)
	case has("connection reset", "broken pipe", "eof"):
		said = fmt.Sprintf("%s stopped answering: it may have quit, gone to sleep or left the network", where)
	default:
		return err.Error()
	}
	if errors.Is(err, client.ErrServerGone) {
		said += "; your draft is kept: render it here, or try again when it is back"
	}
	return said
}
