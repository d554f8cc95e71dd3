package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// suggest returns the candidate closest to word when it is close enough to
// be a typo (an edit distance of at most a third of the word, at least 1
// and at most 3), or a candidate word starts with; "" when none is.
func suggest(word string, candidates []string) string {
	best, bestD := "", 1<<30
	limit := min(max(len(word)/3, 1), 3)
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= limit {
		return best
	}
	for _, c := range candidates {
		if len(word) >= 3 && strings.HasPrefix(c, word) {
			return c
		}
	}
	return ""
}

// editDistance is the Damerau-Levenshtein distance (optimal string
// alignment) between a and b, counted in bytes: names here are ASCII.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// unknownFlagError turns pflag's "unknown flag" errors into a short usage
// error that names the closest flag, instead of the whole usage text; nil
// for any other error.
func unknownFlagError(c *command, fs *pflag.FlagSet, err error) error {
	msg := err.Error()
	var name string
	switch {
	case strings.HasPrefix(msg, "unknown flag: --"):
		name = strings.TrimPrefix(msg, "unknown flag: --")
	case strings.HasPrefix(msg, "unknown shorthand flag: "):
		// unknown shorthand flag: 'x' in -xyz
		if _, rest, ok := strings.Cut(msg, " in -"); ok {
			name = rest
		}
	default:
		return nil
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	hint := fmt.Sprintf("run 'surf help %s' for its flags", c.name)
	if s := suggest(name, names); s != "" {
		hint = fmt.Sprintf("did you mean --%s? (%s)", s, hint)
	}
	return &usageError{cmd: c, msg: msg, hint: hint}
}

// unknownCommandHint advises on a mistyped command.
func unknownCommandHint(name string) string {
	if name == "session" || name == "sessions" {
		return "a background session has no command of its own: 'surf open URL' starts it, the commands marked \"session:\" in 'surf help' act in it (with --session NAME), 'surf close' ends it"
	}
	var names []string
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	if s := suggest(strings.TrimLeft(name, "-"), names); s != "" {
		return fmt.Sprintf("did you mean 'surf %s'? ('surf help' lists the commands)", s)
	}
	return "run 'surf help' for the list of commands"
}
