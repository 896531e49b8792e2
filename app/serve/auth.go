package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
)

// Auth is the credentials a server asks for: A1111's --api-auth USER:PASS (HTTP Basic) and/or a
// bearer token (`Authorization: Bearer TOKEN`). Either one given is enough.
type Auth struct {
	User, Pass string
	Token      string
}

// Set reports whether any credentials are configured.
func (a Auth) Set() bool { return a.User != "" || a.Token != "" }

// ParseAPIAuth reads --api-auth USER:PASS.
func ParseAPIAuth(s string) (user, pass string, err error) {
	user, pass, ok := strings.Cut(s, ":")
	if !ok || user == "" || pass == "" {
		return "", "", errors.New("--api-auth: write it USER:PASSWORD")
	}
	return user, pass, nil
}

// equal compares secrets in constant time: both are hashed first, so neither the content nor
// the length of the expected one leaks through timing.
func equal(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// allows reports whether r carries the credentials. Every comparison runs whatever the result
// of the others.
func (a Auth) allows(r *http.Request) bool {
	ok := false
	if a.User != "" {
		u, p, has := r.BasicAuth()
		userOK := equal(u, a.User)
		passOK := equal(p, a.Pass)
		ok = has && userOK && passOK
	}
	if a.Token != "" {
		h := r.Header.Get("Authorization")
		tok, has := strings.CutPrefix(h, "Bearer ")
		if equal(tok, a.Token) && has {
			ok = true
		}
	}
	return ok
}

// requireAuth answers 401 (as A1111 does: a Basic challenge and a detail) to requests without the
// credentials.
func (a Auth) requireAuth(next http.Handler) http.Handler {
	if !a.Set() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.allows(r) {
			if a.User != "" {
				w.Header().Set("WWW-Authenticate", "Basic")
			} else {
				w.Header().Set("WWW-Authenticate", "Bearer")
			}
			writeJSON(w, http.StatusUnauthorized, map[string]any{"detail": "Incorrect username or password"})
			return
		}
		next.ServeHTTP(w, r)
	})
}
