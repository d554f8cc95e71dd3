package main

import (
	"os"
	"strings"
	"testing"
)

// TestInstallCheckSaysTheFrameMode: "surf install --check" names the frame
// mode and the browser binary it launches, and says that frames on demand
// run without site isolation (the headless shell refuses
// --site-per-process with begin-frame control).
func TestInstallCheckSaysTheFrameMode(t *testing.T) {
	for _, c := range []struct{ mode, want, browser string }{
		{"", "frames:     clock, browser ", "/chromium)"},
		{"on-demand", "frames:     on-demand, browser ", "chromium-headless-shell)"},
	} {
		env := map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		env["SURF_FRAME_MODE"] = c.mode
		_, out, errOut := runSurf(t.Context(), env, "install", "--check")
		var line string
		for l := range strings.SplitSeq(out, "\n") {
			if strings.HasPrefix(l, "frames:") {
				line = l
			}
		}
		if !strings.HasPrefix(line, c.want) || !strings.HasSuffix(line, c.browser) {
			t.Errorf("SURF_FRAME_MODE=%q: the frames line is %q; want %q ... %q\n%s%s", c.mode, line, c.want, c.browser, out, errOut)
		}
		if got := strings.Contains(out, "no site isolation"); got != (c.mode == "on-demand") {
			t.Errorf("SURF_FRAME_MODE=%q: says no site isolation: %v\n%s", c.mode, got, out)
		}
	}
}
