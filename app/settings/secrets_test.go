package settings

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"
)

// TestSecretsInTheKeychain: with a keychain the token goes there and never into the file.
func TestSecretsInTheKeychain(t *testing.T) {
	keyring.MockInit()
	s := &Secrets{FallbackPath: filepath.Join(t.TempDir(), "secrets.json")}
	note, err := s.Set(SecretStudioToken, "0123456789abcdef0123")
	if err != nil || note != "" {
		t.Fatalf("Set: note %q, err %v", note, err)
	}
	if got, err := s.Get(SecretStudioToken); err != nil || got != "0123456789abcdef0123" {
		t.Fatalf("Get: %q, %v", got, err)
	}
	if _, err := os.Stat(s.FallbackPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the fallback file was written although the keychain took the token: %v", err)
	}
	if _, err := s.Set(SecretStudioToken, ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(SecretStudioToken); got != "" {
		t.Errorf("after forgetting: %q", got)
	}
}

// TestSecretsWithoutAKeychain: without a keychain service the token is kept in a file only the
// user reads, and Set says where.
func TestSecretsWithoutAKeychain(t *testing.T) {
	keyring.MockInitWithError(errors.New("The name org.freedesktop.secrets was not provided by any .service files"))
	s := &Secrets{FallbackPath: filepath.Join(t.TempDir(), "secrets.json")}
	note, err := s.Set(SecretStudioToken, "0123456789abcdef0123")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, s.FallbackPath) || !strings.Contains(note, "no keychain") {
		t.Errorf("the note does not say where the token went: %q", note)
	}
	st, err := os.Stat(s.FallbackPath)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("the fallback file is %v, want -rw-------", st.Mode().Perm())
	}
	again := &Secrets{FallbackPath: s.FallbackPath}
	if got, err := again.Get(SecretStudioToken); err != nil || got != "0123456789abcdef0123" {
		t.Fatalf("Get after a relaunch: %q, %v", got, err)
	}
	if _, err := again.Set(SecretStudioToken, ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := again.Get(SecretStudioToken); got != "" {
		t.Errorf("after forgetting: %q", got)
	}
}
