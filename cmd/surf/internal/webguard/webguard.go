// Package webguard holds the security rules shared by surf's web pages
// (the live view, package liveui, and the board's page, package boardui):
// the strict Content-Security-Policy and the headers every response
// carries, and the same-origin check of every request that changes
// something; and the two responses both pages write alike, JSON answers
// and the live view's MJPEG stream. Authentication (token, cookie,
// loopback) is mcpserver.Guard's.
package webguard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// CSP is the Content-Security-Policy of every response: nothing but this
// server's own scripts, styles, images and connections; no inline script;
// no framing.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// SetHeaders sets the security headers of every response: CSP, no
// sniffing, no referrer, no framing, same-origin opener and resources,
// no caching.
func SetHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// SameOrigin reports whether a state-changing request comes from this
// server's own pages: the browser's Sec-Fetch-Site, when sent, must say
// same-origin, and its Origin must be this server's. A request without
// Origin is refused: every browser sends it on a POST.
func SameOrigin(r *http.Request) error {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return fmt.Errorf("a %s request", site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return errors.New("a request without Origin")
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return fmt.Errorf("origin %q", origin)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if u.Scheme != scheme || !strings.EqualFold(u.Host, r.Host) {
		return fmt.Errorf("origin %q is not this server (%s://%s)", origin, scheme, r.Host)
	}
	return nil
}
