package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/zalando/go-keyring"
)

// Secret names the window keeps.
const (
	SecretStudioToken = "studio-token" // the studio hub's token (the Studio dialog)
)

// secretService is the keychain service Easel's secrets are filed under.
const secretService = "Easel"

// Secrets keeps tokens out of settings.json: in the OS keychain where there is one (the macOS
// Keychain; the Secret Service on Linux desktops), else — a Linux without a keyring service — in
// FallbackPath, a file only the user can read, and Set says so.
type Secrets struct {
	FallbackPath string
	mu           sync.Mutex
}

// DefaultSecrets files secrets in the keychain, falling back to secrets.json in the app-support
// folder.
func DefaultSecrets() (*Secrets, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	return &Secrets{FallbackPath: filepath.Join(dir, "secrets.json")}, nil
}

// Get is the secret's value ("" when none was kept).
func (s *Secrets) Get(name string) (string, error) {
	v, err := keyring.Get(secretService, name)
	if err == nil {
		return v, nil
	}
	if !errors.Is(err, keyring.ErrNotFound) && !s.noKeychain(err) {
		return "", fmt.Errorf("the keychain could not be read for %s: %v", name, err)
	}
	file, err := s.readFile()
	if err != nil {
		return "", err
	}
	return file[name], nil
}

// Set keeps value under name ("" forgets it). note is "" when it went to the keychain, else a
// sentence saying where it is kept instead.
func (s *Secrets) Set(name, value string) (note string, err error) {
	var kerr error
	if value == "" {
		kerr = keyring.Delete(secretService, name)
		if errors.Is(kerr, keyring.ErrNotFound) {
			kerr = nil
		}
	} else {
		kerr = keyring.Set(secretService, name, value)
	}
	if kerr == nil {
		// Nothing of it stays in the file (an older fallback copy goes).
		return "", s.writeFile(name, "")
	}
	if !s.noKeychain(kerr) {
		return "", fmt.Errorf("the keychain could not keep %s: %v", name, kerr)
	}
	if err := s.writeFile(name, value); err != nil {
		return "", err
	}
	if value == "" {
		return "", nil
	}
	return fmt.Sprintf("this system has no keychain service, so the %s is kept in %s, readable only by you", plainSecretName(name), s.FallbackPath), nil
}

// noKeychain reports whether err means there is no keychain to use (no Secret Service running,
// no D-Bus session), as opposed to one that refused.
func (s *Secrets) noKeychain(err error) bool {
	return !errors.Is(err, keyring.ErrNotFound) && !errors.Is(err, keyring.ErrSetDataTooBig)
}

func plainSecretName(name string) string {
	if name == SecretStudioToken {
		return "studio token"
	}
	return name
}

func (s *Secrets) readFile() (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readFileLocked()
}

func (s *Secrets) readFileLocked() (map[string]string, error) {
	out := map[string]string{}
	if s.FallbackPath == "" {
		return out, nil
	}
	b, err := os.ReadFile(s.FallbackPath)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return map[string]string{}, fmt.Errorf("the kept secrets (%s) could not be read (%v): enter the token again", s.FallbackPath, err)
	}
	return out, nil
}

// writeFile sets (or, with "", removes) name in the fallback file, written 0600.
func (s *Secrets) writeFile(name, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.FallbackPath == "" {
		if value == "" {
			return nil
		}
		return errors.New("there is no keychain and no folder to keep the secret in")
	}
	m, err := s.readFileLocked()
	if err != nil && value == "" {
		return nil
	}
	if _, had := m[name]; value == "" && !had {
		return nil
	}
	if value == "" {
		delete(m, name)
	} else {
		m[name] = value
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomicMode(s.FallbackPath, append(b, '\n'), 0o600)
}
