package studio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
)

// Inputs travel by content only: an input object's name is "sha256-" and the SHA-256 of its
// data in hex, the only form a worker fetches, and what it fetches is checked against the name.
// A name is never a path: a renderer writes an input under its job's folder under a name of its
// own choosing.

// inputNameRE is the one form of an input object's name.
var inputNameRE = regexp.MustCompile(`^sha256-[0-9a-f]{64}$`)

// InputName is the object name of data.
func InputName(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256-" + hex.EncodeToString(sum[:])
}

// ValidInputName says whether name is an input's name (sha256- and 64 lowercase hex digits).
func ValidInputName(name string) bool { return inputNameRE.MatchString(name) }

// CheckInputNames refuses names that are not inputs' names, before anything is fetched.
func CheckInputNames(names ...string) error {
	for _, n := range names {
		if !ValidInputName(n) {
			return fmt.Errorf("input %q is not a content reference (sha256- and 64 hex digits): the job is refused", short(n))
		}
	}
	return nil
}

// verifiedInputs fetches inputs by name and checks each against its name.
func verifiedInputs(get func(ctx context.Context, name string) ([]byte, error)) Inputs {
	return func(ctx context.Context, name string) ([]byte, error) {
		if err := CheckInputNames(name); err != nil {
			return nil, err
		}
		data, err := get(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("fetching input %s from the hub: %w", name[:15], err)
		}
		if InputName(data) != name {
			return nil, fmt.Errorf("input %s does not match its content (the hub's copy is damaged): the client can send the batch again", name[:15])
		}
		return data, nil
	}
}

// short cuts a name for a message.
func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
