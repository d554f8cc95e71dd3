package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// groups are the commands whose first argument names a subcommand.
var groups = []string{"board", "state", "journal", "bench", "policy"}

// docCommands are the surf command lines in the code of a markdown file:
// its ```sh blocks and its indented blocks, continuation lines joined,
// comments dropped, split at && and at " / " (alternatives on one line).
// Each is the words after "surf" (or "bin/surf").
func docCommands(text string) [][]string {
	var lines []string
	inSh, inFence := false, false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inSh = !inFence && strings.TrimSpace(line) == "```sh"
			inFence = !inFence
			continue
		}
		if inSh || (!inFence && strings.HasPrefix(line, "    ") && !strings.HasPrefix(strings.TrimSpace(line), "|")) {
			lines = append(lines, line)
		}
	}
	joined := strings.ReplaceAll(strings.Join(lines, "\n"), "\\\n", " ")
	var cmds [][]string
	for _, line := range strings.Split(joined, "\n") {
		for _, part := range regexp.MustCompile(`&&| / `).Split(line, -1) {
			words := shellWords(part)
			if len(words) > 1 && (words[0] == "surf" || words[0] == "bin/surf") {
				cmds = append(cmds, words[1:])
			}
		}
	}
	return cmds
}

// shellWords splits a command line into words the way a shell would for
// the simple lines of the docs: quotes group, # starts a comment.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '#' && !inWord:
			return words
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

func TestDocCommandsParse(t *testing.T) {
	text := "x\n\n```sh\nbin/surf run \"a # b\" --allow x \\\n    --report r.html   # a comment\nsurf board wait D && bin/surf board show D\nnpm ci\n```\n\n    surf back / surf key A  # alternatives\n\n```json\nsurf no\n```\n"
	got := docCommands(text)
	want := [][]string{{"run", "a # b", "--allow", "x", "--report", "r.html"}, {"board", "wait", "D"}, {"board", "show", "D"}, {"back"}, {"key", "A"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("docCommands = %q, want %q", got, want)
	}
}

// TestDocCommandsAreSurfs checks each surf command in the code of the
// README and the guides against surf itself: the command exists, and
// every flag the line gives is one of its flags (its --help lists it).
func TestDocCommandsAreSurfs(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	helps := map[string]string{}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, words := range docCommands(string(b)) {
			path := words[:1]
			if slices.Contains(groups, words[0]) && len(words) > 1 {
				path = words[:2]
			}
			key := strings.Join(path, " ")
			help, ok := helps[key]
			if !ok {
				out, err := surfCmd(append(slices.Clone(path), "--help")...).CombinedOutput()
				if err != nil {
					t.Errorf("%s: surf %s: %s --help fails: %v\n%s", filepath.Base(f), strings.Join(words, " "), key, err, out)
				}
				help = string(out)
				helps[key] = help
			}
			for _, w := range words[len(path):] {
				flag, _, _ := strings.Cut(w, "=")
				if !strings.HasPrefix(flag, "--") || flag == "--" {
					continue
				}
				if !regexp.MustCompile(regexp.QuoteMeta(flag) + `([^a-z-]|$)`).MatchString(help) {
					t.Errorf("%s: surf %s: surf %s has no flag %s", filepath.Base(f), strings.Join(words, " "), key, flag)
				}
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("found only %d surf commands in the docs' code", checked)
	}
}
