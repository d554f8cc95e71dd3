package main

import (
	"embed"
	"regexp"
)

// helpFiles are the usage texts of surf's commands and of their shared
// flags, one plain-text file each, so that they read (and diff) as the
// help they print. A line's {{NAME}} is replaced by help/NAME.txt.
//
//go:embed help/*.txt
var helpFiles embed.FS

var helpInclude = regexp.MustCompile(`\{\{([a-z0-9-]+)\}\}`)

// helpText returns help/NAME.txt with its includes expanded. The files
// are part of the binary, so a missing one is a build mistake: it
// panics when the command table is built, which every test run catches.
func helpText(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("surf: no help text " + name)
	}
	return helpInclude.ReplaceAllStringFunc(string(b), func(m string) string {
		return helpText(m[2 : len(m)-2])
	})
}
