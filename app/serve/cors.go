package serve

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// CORS is which browser origins may call the API from a page of theirs (A1111's
// --cors-allow-origins and --cors-allow-origin-regex; none: no page of another origin may,
// the default). As A1111's Starlette CORSMiddleware, with credentials allowed: a preflight
// (OPTIONS with Access-Control-Request-Method) from an allowed origin is answered 200 with the
// methods and the headers asked for, from any other origin 400 without an allow header; other
// requests from an allowed origin carry Access-Control-Allow-Origin.
type CORS struct {
	Origins []string       // exact origins ("http://localhost:3456"); "*" allows every origin
	Regex   *regexp.Regexp // an origin matching it in full is allowed too
}

// ParseCORS reads --cors-allow-origins (comma-separated) and --cors-allow-origin-regex.
func ParseCORS(origins, re string) (CORS, error) {
	var c CORS
	for _, o := range strings.Split(origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.Origins = append(c.Origins, strings.TrimSuffix(o, "/"))
		}
	}
	if re != "" {
		rx, err := regexp.Compile("^(?:" + re + ")$")
		if err != nil {
			return CORS{}, fmt.Errorf("--cors-allow-origin-regex %q is not a regular expression: %v", re, err)
		}
		c.Regex = rx
	}
	return c, nil
}

// Set reports whether any origin is allowed.
func (c CORS) Set() bool { return len(c.Origins) > 0 || c.Regex != nil }

// allows reports whether a page of origin may call the API.
func (c CORS) allows(origin string) bool {
	if origin == "" {
		return false
	}
	for _, o := range c.Origins {
		if o == "*" || o == origin {
			return true
		}
	}
	return c.Regex != nil && c.Regex.MatchString(origin)
}

// corsMethods are the methods a preflight is told the API takes.
const corsMethods = "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT"

// wrap answers preflights and marks allowed origins' answers; it runs before the credentials
// check, as a browser sends no credentials with a preflight.
func (c CORS) wrap(next http.Handler) http.Handler {
	if !c.Set() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		ok := c.allows(origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if !ok {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, "Disallowed CORS origin")
				return
			}
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", corsMethods)
			if asked := r.Header.Get("Access-Control-Request-Headers"); asked != "" {
				h.Set("Access-Control-Allow-Headers", asked)
			}
			h.Set("Access-Control-Max-Age", "600")
			h.Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, "OK")
			return
		}
		if ok {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
		}
		next.ServeHTTP(w, r)
	})
}

// oneTrailingSlash serves /sdapi/v1/options/ as /sdapi/v1/options (FastAPI redirects such a
// path; serving it directly keeps a POST's body, which some clients do not resend after a 307).
func oneTrailingSlash(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") && !strings.HasSuffix(p, "//") {
			r2 := r.Clone(r.Context())
			r2.URL.Path = strings.TrimSuffix(p, "/")
			r2.URL.RawPath = ""
			next.ServeHTTP(w, r2)
			return
		}
		next.ServeHTTP(w, r)
	})
}
