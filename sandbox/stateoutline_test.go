package sandbox_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

func TestOutlineStateHasNoValues(t *testing.T) {
	lax := playwright.SameSiteAttributeLax
	st := &sandbox.StorageState{
		Cookies: []playwright.Cookie{
			{Name: "sid", Value: "secret-cookie-value", Domain: "b.example", Path: "/", Expires: 1700000000, HttpOnly: true, Secure: true, SameSite: lax},
			{Name: "pref", Value: "secret-pref-value", Domain: "a.example", Path: "/", Expires: -1},
		},
		Origins: []playwright.Origin{
			{Origin: "https://z.example", LocalStorage: []playwright.NameValue{{Name: "tok", Value: "secret-storage-value"}}},
			{Origin: "https://a.example", LocalStorage: []playwright.NameValue{{Name: "b", Value: "secret-b"}, {Name: "a", Value: "secret-a"}}},
		},
	}
	out := sandbox.OutlineState("s.json", true, st)
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "secret") {
		t.Fatalf("the outline holds a value: %s", b)
	}
	if out.Path != "s.json" || !out.Encrypted {
		t.Errorf("path, encrypted = %q, %v", out.Path, out.Encrypted)
	}
	if len(out.Cookies) != 2 || out.Cookies[0].Name != "pref" || out.Cookies[1].Name != "sid" {
		t.Fatalf("cookies not sorted by domain: %+v", out.Cookies)
	}
	if c := out.Cookies[1]; c.Expires != "2023-11-14T22:13:20Z" || !c.HTTPOnly || !c.Secure || c.SameSite != "Lax" {
		t.Errorf("sid = %+v", c)
	}
	if out.Cookies[0].Expires != "" {
		t.Errorf("a session cookie has an expiry: %+v", out.Cookies[0])
	}
	if len(out.Origins) != 2 || out.Origins[0].Origin != "https://a.example" || strings.Join(out.Origins[0].Keys, ",") != "a,b" {
		t.Errorf("origins not sorted: %+v", out.Origins)
	}
}
