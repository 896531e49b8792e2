package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"strings"

	"easel/app/serve/openai"
)

// Auth is the credentials a server asks for: A1111's --api-auth USER:PASS (HTTP Basic) and/or a
// bearer token (`Authorization: Bearer TOKEN`). Either one given is enough.
type Auth struct {
	User, Pass string
	Token      string
	// AllowFrom are networks whose clients need no credentials (--allow-from: a studio's LAN,
	// for clients that cannot send any); every other address still needs them.
	AllowFrom []*net.IPNet
}

// Set reports whether any credentials are configured.
func (a Auth) Set() bool { return a.User != "" || a.Token != "" }

// guarded reports whether not every client is let in: credentials or allowed networks.
func (a Auth) guarded() bool { return a.Set() || len(a.AllowFrom) > 0 }

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
	if !a.guarded() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.fromAllowed(r) {
			next.ServeHTTP(w, r)
			return
		}
		if !a.Set() {
			refuse(w, r, http.StatusForbidden, "this server lets in only the networks given with --allow-from; "+clientHost(r)+" is not one of them")
			return
		}
		if !a.allows(r) {
			if a.User != "" {
				w.Header().Set("WWW-Authenticate", "Basic")
			} else {
				w.Header().Set("WWW-Authenticate", "Bearer")
			}
			refuse(w, r, http.StatusUnauthorized, "Incorrect username or password")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuse answers a request the credentials check turns away, in its API's shape: OpenAI's error
// object under /v1/, A1111's detail elsewhere.
func refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		code := "invalid_api_key"
		if status == http.StatusForbidden {
			code = "forbidden"
			msg = "this server lets in only the networks given with --allow-from; " + clientHost(r) + " is not one of them"
		} else {
			msg = "Incorrect API key provided: send the server's --token as the API key (Authorization: Bearer TOKEN)"
		}
		openai.WriteError(w, status, msg, "invalid_request_error", "", code)
		return
	}
	writeJSON(w, status, map[string]any{"detail": msg})
}
