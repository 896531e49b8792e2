package serve

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// ParseAllowFrom reads --allow-from CIDR[,CIDR…] (a bare address is one host: /32 or /128).
func ParseAllowFrom(s string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			ip := net.ParseIP(part)
			if ip == nil {
				return nil, fmt.Errorf("--allow-from %q is not a network: write it like 192.168.1.0/24 or 10.0.0.5", part)
			}
			bits := 128
			if ip.To4() != nil {
				ip, bits = ip.To4(), 32
			}
			out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(part)
		if err != nil {
			return nil, fmt.Errorf("--allow-from %q is not a network: write it like 192.168.1.0/24 or 10.0.0.5", part)
		}
		out = append(out, n)
	}
	return out, nil
}

// fromAllowed reports whether r comes from one of the networks let in without credentials.
func (a Auth) fromAllowed(r *http.Request) bool {
	if len(a.AllowFrom) == 0 {
		return false
	}
	ip := net.ParseIP(clientHost(r))
	if ip == nil {
		return false
	}
	for _, n := range a.AllowFrom {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}
