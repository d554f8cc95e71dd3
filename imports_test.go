package surf_test

import (
	"strings"
	"testing"
)

// lowLevel is the low-level tier: libraries that import no public surf
// package, no application and no test helper.
var lowLevel = []string{
	"internal/bounded", "internal/cdpmux", "internal/jpegpatch", "internal/tokens",
	"internal/llm", "internal/textcut", "internal/proc", "internal/admit", "internal/termsafe",
}

var playwright = []string{module + "/third_party/playwright-go", "github.com/playwright-community/playwright-go"}

// deps lists the packages pkg (a path in surf's module) imports, directly
// or not, test files left out; ok is false when the package does not exist.
func deps(t *testing.T, root, pkg string) (deps []string, ok bool) {
	t.Helper()
	listed := strings.TrimSpace(goCmd(t, root, goEnv, "list", "-e", "-f", "{{if not .Error}}{{.ImportPath}}{{end}}", "./"+pkg))
	if listed == "" {
		return nil, false
	}
	return strings.Fields(goCmd(t, root, goEnv, "list", "-deps", "-f", "{{.ImportPath}}", "./"+pkg)), true
}

// under reports whether path is pkg or a package below it.
func under(path, pkg string) bool { return path == pkg || strings.HasPrefix(path, pkg+"/") }

// TestImportRules checks the tiers of issue 13 with go list -deps: the
// pure packages import no browser, the journal and the report no
// Playwright, and the low-level tier nothing above it.
func TestImportRules(t *testing.T) {
	root := repoRoot(t)
	sandbox := module + "/sandbox"
	type rule struct {
		pkg       string
		forbidden []string
	}
	rules := []rule{
		{pkg: "perception", forbidden: append([]string{sandbox}, playwright...)},
		{pkg: "policy", forbidden: append([]string{sandbox}, playwright...)},
		{pkg: "som", forbidden: append([]string{sandbox}, playwright...)},
		{pkg: "tools", forbidden: append([]string{sandbox}, playwright...)},
		{pkg: "journal", forbidden: playwright},
		// the board holds tasks and runs RunFuncs; what drives a browser
		// is the worker's business
		{pkg: "board", forbidden: append([]string{sandbox, module + "/websurfer"}, playwright...)},
		{pkg: "internal/report", forbidden: playwright},
	}
	for _, low := range lowLevel {
		var forbidden []string
		for _, p := range []string{"policy", "sandbox", "som", "tools", "websurfer", "perception", "journal", "cmd", "internal/testkit", "third_party"} {
			forbidden = append(forbidden, module+"/"+p)
		}
		rules = append(rules, rule{pkg: low, forbidden: forbidden})
	}
	for _, r := range rules {
		ds, ok := deps(t, root, r.pkg)
		if !ok {
			t.Errorf("package %s does not exist", r.pkg)
			continue
		}
		for _, d := range ds {
			for _, f := range r.forbidden {
				if under(d, f) {
					t.Errorf("%s imports %s (directly or not), which its tier forbids", r.pkg, d)
				}
			}
		}
	}
}
