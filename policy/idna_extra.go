package policy

import (
	"strings"

	"golang.org/x/net/idna"
)

//go:generate go run gen_idnadelta.go

// applyIDNADelta brings golang.org/x/net/idna's Unicode 15.0 mapping table
// (the one it uses before Go 1.27) up to Unicode 17.0 for the code points
// that became mapped or ignored since, such as U+1E9E (now mapped to U+00DF
// instead of "ss"), the Georgian capitals U+10A0..U+10C5 (now mapped to
// lowercase) and the Hangul fillers (now ignored). UTS #46 maps code points
// one by one before normalizing, so mapping these few first and leaving the
// rest to x/net gives the same result as the newer table. With newer x/net
// tables the delta is a no-op and is skipped.
func applyIDNADelta(domain string) string {
	if idna.UnicodeVersion >= "17.0.0" {
		return domain
	}
	var sb *strings.Builder
	for i, r := range domain {
		m, isMapped := idnaDeltaMapped[r]
		ign := idnaDeltaIgnored[r]
		if !isMapped && !ign {
			if sb != nil {
				sb.WriteRune(r)
			}
			continue
		}
		if sb == nil {
			sb = &strings.Builder{}
			sb.WriteString(domain[:i])
		}
		if isMapped {
			sb.WriteString(m)
		}
	}
	if sb == nil {
		return domain
	}
	return sb.String()
}
