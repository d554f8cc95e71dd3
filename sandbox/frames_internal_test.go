package sandbox

import (
	"strings"
	"testing"
)

func TestParseFrameMode(t *testing.T) {
	for in, want := range map[string]FrameMode{"": FrameClock, "clock": FrameClock, "on-demand": FrameOnDemand} {
		if got, err := ParseFrameMode(in); err != nil || got != want {
			t.Errorf("ParseFrameMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"ondemand", "Clock", "60hz"} {
		if _, err := ParseFrameMode(in); err == nil {
			t.Errorf("ParseFrameMode(%q) gave no error", in)
		}
	}
	if FrameClock.String() != "clock" || FrameOnDemand.String() != "on-demand" {
		t.Errorf("names: %q, %q", FrameClock, FrameOnDemand)
	}
}

func TestValidateFrameMode(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, ""},
		{Config{FrameMode: FrameClock, Connect: "ws://x"}, ""},
		{Config{FrameMode: FrameOnDemand}, ""},
		{Config{FrameMode: "sometimes"}, "want"},
		{Config{FrameMode: FrameOnDemand, Connect: "ws://x"}, "local browser"},
		{Config{FrameMode: FrameOnDemand, CDP: "http://x"}, "local browser"},
		{Config{FrameMode: FrameOnDemand, Headful: true}, "headless only"},
	} {
		err := validateFrameMode(&c.cfg)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("validateFrameMode(%+v) = %v; want %q", c.cfg, err, c.want)
		}
	}
}
