package sandbox_test

import (
	"os"

	"github.com/surfkit/surf/sandbox"
)

func ExampleStateOutline_WriteText() {
	s := &sandbox.StateOutline{
		Path: "mail.json", Encrypted: true,
		Cookies: []sandbox.CookieOutline{
			{Domain: "mail.example.com", Path: "/", Name: "sid", HTTPOnly: true, Secure: true, SameSite: "Lax"},
			{Domain: ".example.com", Path: "/", Name: "pref\x1b[31m", Expires: "2027-01-01T00:00:00Z"},
		},
		Origins: []sandbox.OriginOutline{{Origin: "https://mail.example.com", Keys: []string{"draft", "theme"}}},
	}
	s.WriteText(os.Stdout)
	// Output:
	// mail.json: 2 cookies, 1 origin, encrypted
	// cookies:
	//   mail.example.com / sid  session  httpOnly secure sameSite=Lax
	//   .example.com / pref\x1b[31m  expires 2027-01-01T00:00:00Z
	// origins:
	//   https://mail.example.com  local storage: draft, theme
}
