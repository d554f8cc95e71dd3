package surf_test

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// maxReadmeLines is how long the README, a landing page, may grow.
const maxReadmeLines = 350

// markdownFiles are README.md and the guides in docs/, as slash paths
// relative to the repository's root.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, g := range guides {
		files = append(files, "docs/"+filepath.Base(g))
	}
	return files
}

var (
	fenceRE   = regexp.MustCompile("^\\s*(```|~~~)")
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	codeRE    = regexp.MustCompile("`+[^`]*`+")
	// linkRE matches an inline link or image, [text](target "title"); the
	// text may span lines but holds no brackets.
	linkRE = regexp.MustCompile(`!?\[([^\[\]]*)\]\(\s*<?([^()\s<>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// schemeRE matches an absolute URL, which the check leaves alone.
	schemeRE = regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`)
)

// mdDoc is what the link check needs of a markdown file: its prose
// (fenced code blocks blanked, so links and headings in code do not count)
// and its headings' anchors.
type mdDoc struct {
	prose   string
	anchors map[string]bool
}

func readMarkdown(t *testing.T, file string) mdDoc {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var prose strings.Builder
	var headings []string
	inFence := false
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if fenceRE.MatchString(line) {
			inFence = !inFence
			prose.WriteString("\n")
			continue
		}
		if inFence {
			prose.WriteString("\n")
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			headings = append(headings, m[2])
		}
		prose.WriteString(line + "\n")
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if inFence {
		t.Errorf("%s: a code block is never closed", file)
	}
	return mdDoc{prose: prose.String(), anchors: anchors(headings)}
}

// slug is the anchor GitHub gives a heading: the heading's text (inline
// code and links reduced to their text) in lower case, with every
// character that is not a letter, a digit, a space, a hyphen or an
// underscore removed, and each space turned into a hyphen.
func slug(heading string) string {
	heading = linkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the headings' anchors; a repeated one gets -1, -2, ... as on
// GitHub.
func anchors(headings []string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, h := range headings {
		s := slug(h)
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// links are the targets of the inline links and images in a document's
// prose (not in code).
func links(d mdDoc) []string {
	prose := codeRE.ReplaceAllString(d.prose, "")
	var out []string
	for _, m := range linkRE.FindAllStringSubmatch(prose, -1) {
		out = append(out, m[2])
	}
	return out
}

// checkLinks reports every relative link in files (slash paths under
// root) that does not resolve: a file or directory that does not exist,
// or an #anchor that no heading of the target markdown file makes.
func checkLinks(root string, files []string, read func(string) mdDoc) []string {
	docs := map[string]mdDoc{}
	get := func(rel string) mdDoc {
		if d, ok := docs[rel]; ok {
			return d
		}
		d := read(filepath.Join(root, filepath.FromSlash(rel)))
		docs[rel] = d
		return d
	}
	var bad []string
	for _, f := range files {
		for _, l := range links(get(f)) {
			if l == "" || schemeRE.MatchString(l) {
				continue
			}
			target, frag, _ := strings.Cut(l, "#")
			rel := f
			if target != "" {
				if strings.HasPrefix(target, "/") {
					bad = append(bad, fmt.Sprintf("%s: %s: an absolute path does not resolve on GitHub and in a clone alike", f, l))
					continue
				}
				rel = path.Clean(path.Join(path.Dir(f), target))
				if rel == ".." || strings.HasPrefix(rel, "../") {
					bad = append(bad, fmt.Sprintf("%s: %s: outside the repository", f, l))
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
					bad = append(bad, fmt.Sprintf("%s: %s: no such file", f, l))
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(rel, ".md") {
				bad = append(bad, fmt.Sprintf("%s: %s: an anchor into a file that is not markdown", f, l))
				continue
			}
			if !get(rel).anchors[frag] {
				bad = append(bad, fmt.Sprintf("%s: %s: %s has no heading with that anchor", f, l, rel))
			}
		}
	}
	return bad
}

// TestDocsLinksResolve checks every relative link and image in README.md
// and docs/*.md: the file exists and, for an #anchor, a heading of the
// target makes it (GitHub's rule).
func TestDocsLinksResolve(t *testing.T) {
	root := repoRoot(t)
	read := func(f string) mdDoc { return readMarkdown(t, f) }
	for _, bad := range checkLinks(root, markdownFiles(t, root), read) {
		t.Error(bad)
	}
}

// TestDocsLinkCheckCatches runs the link check on documents with broken
// links, so that TestDocsLinksResolve cannot pass by checking nothing.
func TestDocsLinkCheckCatches(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"README.md": "# Title\n\nSee [the guide](docs/guide.md#two-words), [gone](docs/gone.md), " +
			"[no anchor](docs/guide.md#nowhere), [here](#title) and [`code` in text](#code-in-a-heading).\n\n" +
			"## `code` in a heading\n\n```\n[in code](docs/gone.md)\n```\n",
		"docs/guide.md": "# Guide\n\n## Two words\n\nBack to [the README](../README.md#title), " +
			"[a wrapped\nlink](../README.md#nope).\n\n## Two words\n\n[second](#two-words-1)\n",
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(f string) mdDoc { return readMarkdown(t, f) }
	got := checkLinks(root, []string{"README.md", "docs/guide.md"}, read)
	want := []string{
		"README.md: docs/gone.md: no such file",
		"README.md: docs/guide.md#nowhere: docs/guide.md has no heading with that anchor",
		"docs/guide.md: ../README.md#nope: README.md has no heading with that anchor",
	}
	if !slices.Equal(got, want) {
		t.Errorf("link check found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Named sessions and capacity in `surf serve`": "named-sessions-and-capacity-in-surf-serve",
		"The live view: watch, approve, take over":    "the-live-view-watch-approve-take-over",
		"Chromium's flags":                            "chromiums-flags",
		"`surf install`":                              "surf-install",
		"websurfer: settling and unchanged pages":     "websurfer-settling-and-unchanged-pages",
		"See [the guide](docs/x.md) now":              "see-the-guide-now",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestReadmeIsALandingPage checks the README's size and that it links
// every guide in docs/.
func TestReadmeIsALandingPage(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to a guide in docs/", n, maxReadmeLines)
	}
	linked := map[string]bool{}
	for _, l := range links(readMarkdown(t, filepath.Join(root, "README.md"))) {
		target, _, _ := strings.Cut(l, "#")
		linked[path.Clean(target)] = true
	}
	for _, f := range markdownFiles(t, root)[1:] {
		if !linked[f] {
			t.Errorf("README.md does not link the guide %s", f)
		}
	}
}

// makeTargets are the targets a Makefile defines (not its variables).
func makeTargets(makefile string) map[string]bool {
	targets := map[string]bool{}
	rule := regexp.MustCompile(`^([A-Za-z0-9_.-][A-Za-z0-9_. -]*):([^=]|$)`)
	for _, line := range strings.Split(makefile, "\n") {
		if m := rule.FindStringSubmatch(line); m != nil {
			for _, t := range strings.Fields(m[1]) {
				targets[t] = true
			}
		}
	}
	return targets
}

// quickStart is the commands of the README's quick start: the lines of
// the first sh code block after "## Quick start", comments dropped.
func quickStart(t *testing.T, readme string) [][]string {
	t.Helper()
	_, sec, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		t.Fatal(`README.md has no "## Quick start" section`)
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	_, block, ok := strings.Cut(sec, "```sh\n")
	if !ok {
		t.Fatal("README.md's quick start has no sh code block")
	}
	block, _, _ = strings.Cut(block, "```")
	var cmds [][]string
	for _, line := range strings.Split(block, "\n") {
		line, _, _ = strings.Cut(line, "#")
		if f := strings.Fields(line); len(f) > 0 {
			cmds = append(cmds, f)
		}
	}
	return cmds
}

// TestQuickStartIsMakeTargets checks that the README's quick start is
// make commands whose targets the Makefile defines, and that they are the
// commands the Makefile's opening comment names.
func TestQuickStartIsMakeTargets(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := makeTargets(string(mk))
	cmds := quickStart(t, string(readme))
	if len(cmds) == 0 {
		t.Fatal("README.md's quick start has no commands")
	}
	var named []string
	for _, c := range cmds {
		if c[0] != "make" || len(c) < 2 {
			t.Errorf("quick start: %q is not a make command", strings.Join(c, " "))
			continue
		}
		for _, target := range c[1:] {
			if !targets[target] {
				t.Errorf("quick start: make %s: the Makefile has no target %q", target, target)
			}
		}
		named = append(named, strings.Join(c, " "))
	}
	var header []string
	for _, line := range strings.Split(string(mk), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		if f := strings.Fields(strings.TrimPrefix(line, "#")); len(f) >= 2 && f[0] == "make" {
			header = append(header, f[0]+" "+f[1])
		}
	}
	if !slices.Equal(named, header) {
		t.Errorf("the quick start runs %q, the Makefile's opening comment names %q", named, header)
	}
}

func TestMakeTargets(t *testing.T) {
	got := makeTargets("X := 1\nY ?= 2\n.PHONY: a b\nall: build\nbuild:\n\tgo build\nfoo bar: baz\n")
	for _, want := range []string{"all", "build", "foo", "bar"} {
		if !got[want] {
			t.Errorf("makeTargets misses %q: %v", want, got)
		}
	}
	for _, not := range []string{"X", "Y"} {
		if got[not] {
			t.Errorf("makeTargets takes the variable %q for a target", not)
		}
	}
}

// TestReadmeGoExampleIsFromTheGuide checks that the README's short Go
// example is lines of the Go API guide's program, in its order, so it
// says nothing the built program does not.
func TestReadmeGoExampleIsFromTheGuide(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, code, ok := strings.Cut(string(readme), "```go\n")
	if !ok {
		t.Fatal("README.md has no go code block")
	}
	code, _, _ = strings.Cut(code, "\n```")
	program := strings.Split(goAPISnippet(t, root), "\n")
	i := 0
	for _, line := range strings.Split(code, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		for i < len(program) && strings.TrimSpace(program[i]) != line {
			i++
		}
		if i == len(program) {
			t.Fatalf("README.md's go example line %q is not in %s's program (in this order)", line, goAPIGuide)
		}
		i++
	}
}
