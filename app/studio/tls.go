package studio

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// hubTLS is the hub's TLS configuration and its certificate's fingerprint: the given pair, or a
// self-signed one made once and kept in the data folder (so the fingerprint workers pinned stays
// valid across restarts).
func hubTLS(cfg HubConfig) (*tls.Config, string, error) {
	certFile, keyFile := cfg.TLSCert, cfg.TLSKey
	if certFile == "" {
		dir := filepath.Join(cfg.Data, "tls")
		certFile, keyFile = filepath.Join(dir, "hub-cert.pem"), filepath.Join(dir, "hub-key.pem")
		if _, err := os.Stat(certFile); errors.Is(err, os.ErrNotExist) {
			if err := selfSign(dir, certFile, keyFile); err != nil {
				return nil, "", fmt.Errorf("making the hub's self-signed certificate in %s: %w", dir, err)
			}
		}
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, "", fmt.Errorf("the hub's TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, CertFingerprint(pair.Certificate[0]), nil
}

// CertFingerprint is the SHA-256 of a DER certificate, in hex: what the pairing shows.
func CertFingerprint(der []byte) string {
	s := sha256.Sum256(der)
	return hex.EncodeToString(s[:])
}

// selfSign writes a P-256 certificate for this host, valid ten years.
func selfSign(dir, certFile, keyFile string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "Easel studio hub " + host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", host, host + ".local"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

// pinnedTLS trusts exactly the certificate with this SHA-256 fingerprint (the self-signed hub's,
// read off the pairing), whatever name it carries.
func pinnedTLS(pin string) *tls.Config {
	pin = strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(strings.TrimSpace(pin), "sha256:"), ":", ""))
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, // replaced by the pin check below
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("the hub sent no certificate")
			}
			if got := CertFingerprint(raw[0]); got != pin {
				return fmt.Errorf("the hub's certificate fingerprint is %s, not the pinned %s: this is not your hub (or it made a new certificate: pair again)", got, pin)
			}
			return nil
		},
	}
}
