package sandbox

import (
	"sort"
	"time"
)

// StateOutline is what a state file holds, without a single value: its
// cookies' names and scopes and its origins' local-storage keys, sorted.
// It is safe to print or to show a model.
type StateOutline struct {
	Path      string          `json:"path"`
	Encrypted bool            `json:"encrypted"`
	Cookies   []CookieOutline `json:"cookies"`
	Origins   []OriginOutline `json:"origins"`
}

// CookieOutline is a cookie without its value.
type CookieOutline struct {
	Domain   string `json:"domain"`
	Path     string `json:"path"`
	Name     string `json:"name"`
	Expires  string `json:"expires,omitempty"` // RFC 3339, UTC; empty for a session cookie
	HTTPOnly bool   `json:"http_only,omitempty"`
	Secure   bool   `json:"secure,omitempty"`
	SameSite string `json:"same_site,omitempty"`
}

// OriginOutline is an origin's local-storage keys, without their values.
type OriginOutline struct {
	Origin string   `json:"origin"`
	Keys   []string `json:"local_storage_keys"`
}

// ReadStateOutline reads the state file f (decrypting it with its key)
// and outlines it.
func ReadStateOutline(f StateFile) (*StateOutline, error) {
	st, enc, err := ReadState(f)
	if err != nil {
		return nil, err
	}
	return OutlineState(f.Path, enc, st), nil
}

// OutlineState keeps a storage state's names, domains and expiry, sorted,
// and drops its values. path and encrypted describe the file it came
// from.
func OutlineState(path string, encrypted bool, st *StorageState) *StateOutline {
	out := &StateOutline{Path: path, Encrypted: encrypted, Cookies: []CookieOutline{}, Origins: []OriginOutline{}}
	for _, c := range st.Cookies {
		sc := CookieOutline{Domain: c.Domain, Path: c.Path, Name: c.Name, HTTPOnly: c.HttpOnly, Secure: c.Secure}
		if c.Expires > 0 {
			sc.Expires = time.Unix(int64(c.Expires), 0).UTC().Format(time.RFC3339)
		}
		if c.SameSite != nil {
			sc.SameSite = string(*c.SameSite)
		}
		out.Cookies = append(out.Cookies, sc)
	}
	sort.Slice(out.Cookies, func(i, j int) bool {
		a, b := out.Cookies[i], out.Cookies[j]
		if a.Domain != b.Domain {
			return a.Domain < b.Domain
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Name < b.Name
	})
	for _, o := range st.Origins {
		so := OriginOutline{Origin: o.Origin, Keys: []string{}}
		for _, kv := range o.LocalStorage {
			so.Keys = append(so.Keys, kv.Name)
		}
		sort.Strings(so.Keys)
		out.Origins = append(out.Origins, so)
	}
	sort.Slice(out.Origins, func(i, j int) bool { return out.Origins[i].Origin < out.Origins[j].Origin })
	return out
}
