package main

import (
	"io/fs"
	"strings"
	"testing"
)

// TestHelpFiles checks that every help/*.txt expands (its {{NAME}}
// includes name files that exist) and that every command's usage is set.
func TestHelpFiles(t *testing.T) {
	names, err := fs.Glob(helpFiles, "help/*.txt")
	if err != nil || len(names) == 0 {
		t.Fatalf("no help files: %v", err)
	}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "help/"), ".txt")
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("help/%s.txt: %v", name, r)
				}
			}()
			if s := helpText(name); helpInclude.MatchString(s) || strings.TrimSpace(s) == "" {
				t.Errorf("help/%s.txt expands to %q", name, s)
			}
		}()
	}
	for name, c := range commands {
		if !c.hidden && strings.TrimSpace(c.usage) == "" {
			t.Errorf("surf %s has no usage text", name)
		}
	}
}
