package policy

import (
	"net/netip"
	"strings"
)

// privateRange is one non-public address block.
type privateRange struct {
	prefix netip.Prefix
	name   string
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// privateRanges lists the blocks that are not the public internet, most
// specific first so the reason names the narrowest one. IPv6 blocks that
// embed an IPv4 address (IPv4-mapped, NAT64, 6to4) are handled in
// PrivateAddress by looking at the embedded address.
var privateRanges = []privateRange{
	{mustPrefix("169.254.169.254/32"), "cloud metadata"},
	{mustPrefix("255.255.255.255/32"), "broadcast"},
	{mustPrefix("0.0.0.0/8"), "this network (0.0.0.0/8)"},
	{mustPrefix("10.0.0.0/8"), "private network (RFC 1918)"},
	{mustPrefix("100.64.0.0/10"), "carrier-grade NAT (100.64.0.0/10)"},
	{mustPrefix("127.0.0.0/8"), "loopback"},
	{mustPrefix("169.254.0.0/16"), "link-local"},
	{mustPrefix("172.16.0.0/12"), "private network (RFC 1918)"},
	{mustPrefix("192.0.0.0/24"), "IETF protocol assignments (192.0.0.0/24)"},
	{mustPrefix("192.0.2.0/24"), "documentation (TEST-NET-1)"},
	{mustPrefix("192.168.0.0/16"), "private network (RFC 1918)"},
	{mustPrefix("198.18.0.0/15"), "benchmarking (198.18.0.0/15)"},
	{mustPrefix("198.51.100.0/24"), "documentation (TEST-NET-2)"},
	{mustPrefix("203.0.113.0/24"), "documentation (TEST-NET-3)"},
	{mustPrefix("224.0.0.0/4"), "multicast"},
	{mustPrefix("240.0.0.0/4"), "reserved (240.0.0.0/4)"},

	{mustPrefix("::/128"), "unspecified"},
	{mustPrefix("::1/128"), "loopback"},
	{mustPrefix("fd00:ec2::254/128"), "cloud metadata"},
	{mustPrefix("::/96"), "IPv4-compatible (deprecated, ::/96)"},
	{mustPrefix("64:ff9b:1::/48"), "local-use NAT64 (64:ff9b:1::/48)"},
	{mustPrefix("100::/64"), "discard-only (100::/64)"},
	{mustPrefix("2001::/23"), "IETF protocol assignments (2001::/23, includes Teredo)"},
	{mustPrefix("2001:db8::/32"), "documentation (2001:db8::/32)"},
	{mustPrefix("3fff::/20"), "documentation (3fff::/20)"},
	{mustPrefix("fc00::/7"), "unique local (fc00::/7)"},
	{mustPrefix("fe80::/10"), "link-local"},
	{mustPrefix("fec0::/10"), "site-local (deprecated, fec0::/10)"},
	{mustPrefix("ff00::/8"), "multicast"},
}

var (
	nat64Prefix   = mustPrefix("64:ff9b::/96")
	sixToFour     = mustPrefix("2002::/16")
	ipv4Mapped    = mustPrefix("::ffff:0:0/96")
	ipv4Translate = mustPrefix("::ffff:0:0:0/96") // SIIT IPv4-translated
)

// PrivateAddress reports whether addr is outside the public internet, and
// which kind of block it is in: loopback, RFC 1918, link-local, cloud
// metadata, unique local, this-network, unspecified, carrier-grade NAT,
// multicast, broadcast, documentation and other reserved ranges, and IPv6
// addresses that embed such an IPv4 address (IPv4-mapped ::ffff:0:0/96,
// NAT64 64:ff9b::/96, 6to4 2002::/16). An invalid Addr counts as private.
func PrivateAddress(addr netip.Addr) (kind string, private bool) {
	if !addr.IsValid() {
		return "invalid address", true
	}
	addr = addr.WithZone("")
	if addr.Is6() {
		b := addr.As16()
		var embedded netip.Addr
		var via string
		switch {
		case ipv4Mapped.Contains(addr):
			embedded, via = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), "IPv4-mapped"
		case ipv4Translate.Contains(addr):
			embedded, via = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), "IPv4-translated"
		case nat64Prefix.Contains(addr):
			embedded, via = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), "NAT64"
		case sixToFour.Contains(addr):
			embedded, via = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), "6to4"
		}
		if embedded.IsValid() {
			if k, p := PrivateAddress(embedded); p {
				return k + " via " + via + " " + embedded.String(), true
			}
			return "", false
		}
	}
	for _, r := range privateRanges {
		if r.prefix.Contains(addr) {
			return r.name, true
		}
	}
	return "", false
}

// loopbackName reports whether a canonical domain (lowercase, no trailing
// dot) is "localhost" or under ".localhost", names Chromium resolves to
// loopback itself, without DNS and bypassing proxies, or one of the
// loopback names of a Debian /etc/hosts.
func loopbackName(name string) bool {
	switch name {
	case "localhost", "localhost.localdomain", "localhost6", "localhost6.localdomain6", "ip6-localhost", "ip6-loopback":
		return true
	}
	return strings.HasSuffix(name, ".localhost")
}

// privateNameSuffixes are special-use domains that only resolve on the
// local network.
var privateNameSuffixes = []string{"local", "internal", "home.arpa"}

// privateName reports whether a canonical domain is a special-use private
// name, and which.
func privateName(name string) (kind string, private bool) {
	if loopbackName(name) {
		return "loopback name", true
	}
	for _, s := range privateNameSuffixes {
		if name == s || strings.HasSuffix(name, "."+s) {
			return "local-network name (." + s + ")", true
		}
	}
	return "", false
}
