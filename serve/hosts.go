package serve

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// The Host check guards against DNS rebinding: a page on a name its owner
// points at 127.0.0.1 would otherwise read the viewer as its own origin,
// and its POSTs would pass the cross-origin check, Origin and Host being
// both the attacker's name. A request is answered only when its Host is
//
//   - a loopback address (127.0.0.0/8, ::1), localhost or a name under
//     .localhost, with the port of the connection it came on (the port
//     listened on, whatever --addr asked: ":0" included);
//   - the host of --addr (unless it is 0.0.0.0 or [::]), with that port;
//   - a name of --allowed-hosts: NAME with any port or none (a reverse
//     proxy in front passes the client's Host), NAME:PORT with that port.
//
// Names are compared case-insensitively, IP addresses by value; a name's
// one trailing dot (the absolute form, "localhost.") is the same name. A
// request without Host (HTTP/1.0) is refused: it cannot be told apart
// from a rebound one. The check comes before the token (a token in a
// cookie is sent to the rebound name too) and before the cross-origin
// check; a refusal is 403 naming --allowed-hosts.

// hostRule is a name a request's Host may give, and with which port.
type hostRule struct {
	name string // lower case, no trailing dot; an IP address canonical, without brackets
	port int    // anyPort, listeningPort, or the port itself
}

const (
	anyPort       = -1
	listeningPort = 0
)

// parseHost splits a Host header, or an --allowed-hosts entry when bare
// (which may give an IPv6 address without brackets), into its name (lower
// case, one trailing dot dropped, an IP address canonical) and port (-1
// when none is given).
func parseHost(s string, bare bool) (name string, ip net.IP, port int, err error) {
	port = -1
	var rest string
	switch {
	case s == "":
		return "", nil, 0, errors.New("empty")
	case s[0] == '[':
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", nil, 0, errors.New("no ] after [")
		}
		name, rest = s[1:end], s[end+1:]
		if ip = net.ParseIP(name); ip == nil || !strings.Contains(name, ":") {
			return "", nil, 0, fmt.Errorf("%q in brackets is not an IPv6 address", name)
		}
		if rest != "" && rest[0] != ':' {
			return "", nil, 0, fmt.Errorf("%q after the brackets", rest)
		}
	case strings.Count(s, ":") > 1:
		if ip = net.ParseIP(s); !bare || ip == nil {
			return "", nil, 0, errors.New("an IPv6 address is written in brackets, [ADDRESS]:PORT")
		}
		return ip.String(), ip, port, nil
	default:
		var found bool
		name, rest, found = strings.Cut(s, ":")
		if found {
			rest = ":" + rest
		}
		name = strings.ToLower(name)
		if len(name) > 1 && strings.HasSuffix(name, ".") {
			name = name[:len(name)-1]
		}
		if err := checkHostName(name); err != nil {
			return "", nil, 0, err
		}
		ip = net.ParseIP(name)
	}
	if rest != "" {
		digits := rest[1:]
		p, err := strconv.Atoi(digits)
		if digits == "" || strings.Trim(digits, "0123456789") != "" || err != nil || p < 1 || p > 65535 {
			return "", nil, 0, fmt.Errorf("port %q is not a number from 1 to 65535", digits)
		}
		port = p
	}
	if ip != nil {
		name = ip.String()
	}
	return name, ip, port, nil
}

// checkHostName refuses a name that is not dot-separated labels of
// letters, digits, '-' and '_' (a DNS name or an IPv4 address; a name in
// another script is given in its ASCII form, xn--…).
func checkHostName(name string) error {
	if name == "" || len(name) > 253 {
		return errors.New("a host name is 1 to 253 characters")
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" {
			return errors.New("an empty label (two dots, or a dot first)")
		}
		for _, c := range label {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("%q is not a letter, digit, '-' or '_'", c)
			}
		}
	}
	return nil
}

// CheckHosts refuses an --allowed-hosts entry that is not NAME or
// NAME:PORT, NAME a host name or an IP address (an IPv6 one in brackets
// when a port follows).
func CheckHosts(names []string) error {
	_, err := hostRules(names, "")
	return err
}

// hostRules are the rules of the names given and of addr's host.
func hostRules(names []string, addr string) ([]hostRule, error) {
	var rules []hostRule
	for _, h := range names {
		name, _, port, err := parseHost(h, true)
		if err != nil {
			return nil, fmt.Errorf("--allowed-hosts %q: %v: expected a host name or an IP address, with :PORT or without", h, err)
		}
		rules = append(rules, hostRule{name: name, port: port})
	}
	if addr == "" {
		return rules, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: expected HOST:PORT (%v)", addr, err)
	}
	if host == "" {
		return rules, nil
	}
	name, ip, _, err := parseHost(host, true)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %v", addr, err)
	}
	if ip == nil || !ip.IsUnspecified() {
		rules = append(rules, hostRule{name: name, port: listeningPort})
	}
	return rules, nil
}

// hostAllowed says whether r's Host names this viewer (see above).
func (s *Server) hostAllowed(r *http.Request) bool {
	if r.Host == "" {
		return false
	}
	name, ip, port, err := parseHost(r.Host, false)
	if err != nil {
		return false
	}
	if port < 0 {
		port = 80
	}
	listened := -1 // none: a handler called without a server's connection
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, p, err := net.SplitHostPort(a.String()); err == nil {
			listened, _ = strconv.Atoi(p)
		}
	}
	local := ip != nil && ip.IsLoopback() || name == "localhost" || strings.HasSuffix(name, ".localhost")
	if local && port == listened {
		return true
	}
	for _, h := range s.hosts {
		if h.name == name && (h.port == anyPort || h.port == port || h.port == listeningPort && port == listened) {
			return true
		}
	}
	return false
}

// refuseHost answers a request whose Host is not the viewer's.
func refuseHost(w http.ResponseWriter, r *http.Request) {
	msg := "this viewer answers only requests that name it in a Host header (HTTP/1.1); the names it answers to besides loopback are given with --allowed-hosts"
	if r.Host != "" {
		msg = fmt.Sprintf("Host %q is not a name this viewer answers to (a guard against DNS rebinding): open it at a loopback address or localhost with the port it listens on, or start gymlens serve with --allowed-hosts naming it", r.Host)
	}
	w.Header().Set("Connection", "close") // a refused client keeps no connection slot
	http.Error(w, msg, http.StatusForbidden)
}
