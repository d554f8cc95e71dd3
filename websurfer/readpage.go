package websurfer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/surfkit/surf/internal/tokens"
	"github.com/surfkit/surf/perception"
	"github.com/surfkit/surf/tools"
)

// ReadPageTokens is the size of one page of read_page's markdown.
const ReadPageTokens = 2000

// maxHTML bounds the HTML surf converts for read_page and the summarizers.
const maxHTML = 8 << 20

// Markdown is the main content of the active tab as markdown: the page's
// <main>, <article> or role=main element if it has one, else its body
// without navigation, header, footer and asides.
func (s *Surfer) Markdown(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", ErrClosed
	}
	return s.markdown(ctx, s.tabs[s.active])
}

// markdown is the main content of tab t as markdown, read under guard
// (hang.go). The caller holds s.mu.
func (s *Surfer) markdown(ctx context.Context, t *tab) (string, error) {
	src, err := guarded(ctx, s, t, func() (string, error) { return callPage(ctx, t.page.Content) })
	if err != nil {
		if browserGone(err) || ctx.Err() != nil || tools.IsToolError(err) {
			return "", err
		}
		return "", toolErr("could not read the page: %s", shortErr(err))
	}
	if len(src) > maxHTML {
		src = src[:maxHTML]
	}
	return htmlToMarkdown(ctx, src, t.page.URL())
}

// htmlToMarkdown converts the main content of an HTML document.
func htmlToMarkdown(ctx context.Context, src, pageURL string) (string, error) {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return "", toolErr("could not parse the page: %v", err)
	}
	root := mainContent(doc)
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		strikethrough.NewStrikethroughPlugin(),
		// Tables stay tables: cell text run together ("Saturday10:00")
		// loses which value is which. Minimal padding saves tokens.
		table.NewTablePlugin(
			table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
			table.WithHeaderPromotion(true),
			table.WithSkipEmptyRows(true),
			table.WithSpanCellBehavior(table.SpanBehaviorMirror),
		),
	))
	md, err := conv.ConvertNode(root, converter.WithDomain(pageURL), converter.WithContext(ctx))
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", toolErr("could not convert the page to markdown: %v", err)
	}
	return strings.TrimSpace(string(md)), nil
}

// mainContent picks the node holding the page's main content and strips
// what is never content.
func mainContent(doc *html.Node) *html.Node {
	var main, article, body *html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch {
			case n.DataAtom == atom.Main || attr(n, "role") == "main":
				if main == nil {
					main = n
				}
			case n.DataAtom == atom.Article:
				if article == nil {
					article = n
				}
			case n.DataAtom == atom.Body:
				body = n
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	root := main
	if root == nil {
		root = article
	}
	if root == nil {
		root = body
	}
	if root == nil {
		root = doc
	}
	strip(root, root == body || root == doc)
	return root
}

func attr(n *html.Node, k string) string {
	for _, a := range n.Attr {
		if a.Key == k {
			return a.Val
		}
	}
	return ""
}

// strip removes scripts, styles, hidden elements and (when chrome is set)
// navigation, header, footer and asides.
func strip(n *html.Node, chrome bool) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode {
			drop := false
			switch c.DataAtom {
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Iframe, atom.Svg, atom.Canvas:
				drop = true
			case atom.Nav, atom.Header, atom.Footer, atom.Aside:
				drop = chrome
			}
			if _, hidden := hasAttr(c, "hidden"); hidden || attr(c, "aria-hidden") == "true" {
				drop = true
			}
			switch attr(c, "role") {
			case "navigation", "banner", "contentinfo", "complementary":
				drop = drop || chrome
			}
			switch {
			case drop:
				n.RemoveChild(c)
			case c.DataAtom == atom.Select:
				// Options run together as text ("Choose a colourRedGreen"):
				// say them as a list, the selected ones marked.
				n.InsertBefore(&html.Node{Type: html.TextNode, Data: selectText(c)}, c)
				n.RemoveChild(c)
			default:
				strip(c, chrome)
			}
		}
		c = next
	}
}

// selectText renders a <select> for read_page: "(select: Choose a colour |
// Red (selected) | Green)", with option groups as "Group: option".
func selectText(sel *html.Node) string {
	var opts []string
	var walk func(n *html.Node, group string)
	walk = func(n *html.Node, group string) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.DataAtom {
			case atom.Optgroup:
				walk(c, attr(c, "label"))
			case atom.Option:
				label := attr(c, "label")
				if label == "" {
					label = strings.Join(strings.Fields(textOf(c)), " ")
				}
				if group != "" {
					label = group + ": " + label
				}
				if _, sel := hasAttr(c, "selected"); sel {
					label += " (selected)"
				}
				opts = append(opts, label)
			}
		}
	}
	walk(sel, "")
	return " (select: " + strings.Join(opts, " | ") + ") "
}

// textOf is the text below n.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func hasAttr(n *html.Node, k string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == k {
			return a.Val, true
		}
	}
	return "", false
}

// paginate splits markdown into pages of at most max tokens, at paragraph
// boundaries where it can.
func paginate(md string, max int) []string {
	var pages []string
	var cur strings.Builder
	used := 0
	flush := func() {
		if cur.Len() > 0 {
			pages = append(pages, strings.TrimSpace(cur.String()))
			cur.Reset()
			used = 0
		}
	}
	for _, para := range strings.Split(md, "\n\n") {
		n := tokens.Count(para) + 1
		if n > max {
			// A paragraph larger than a page: cut it at token boundaries.
			flush()
			rest := para
			for rest != "" {
				chunk := tokens.Truncate(rest, max)
				if chunk == "" {
					chunk = rest
				}
				pages = append(pages, chunk)
				rest = rest[len(chunk):]
			}
			continue
		}
		if used+n > max {
			flush()
		}
		if cur.Len() > 0 {
			cur.WriteString("\n\n")
		}
		cur.WriteString(para)
		used += n
	}
	flush()
	if len(pages) == 0 {
		pages = []string{""}
	}
	return pages
}

// ReadPage returns page n (from 1) of the active tab's main content as
// markdown, fenced as page data.
func (s *Surfer) ReadPage(ctx context.Context, n int) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", ErrClosed
	}
	if n < 1 {
		return "", toolErr("read_page pages start at 1, not %d", n)
	}
	s.dismissDialog(nil, "another action came first")
	t := s.tabs[s.active]
	md, err := s.markdown(ctx, t)
	if err != nil {
		return "", err
	}
	md = s.pol.Redact(md)
	pages := paginate(md, ReadPageTokens)
	if n > len(pages) {
		return "", toolErr("the page has %d read_page pages; there is no page %d", len(pages), n)
	}
	nonce := perception.NewNonce()
	body := strings.ReplaceAll(pages[n-1], nonce, "")
	if strings.TrimSpace(body) == "" {
		body = "(the page has no text content)"
	}
	return fmt.Sprintf("read_page: page %d of %d of the main content of %s, as markdown:\n<<<%s\n%s\n%s>>>", n, len(pages), q(s.pol.Redact(t.page.URL()), 200), nonce, body, nonce), nil
}

// errNoModel is returned by the model-backed tools when none is set.
var errNoModel = errors.New("no model is configured")

// SummarizePage summarizes the active tab's main content with the model.
func (s *Surfer) SummarizePage(ctx context.Context) (string, error) {
	if s.cfg.Model == nil {
		return "", toolErr("summarize_page needs a model, and %v; use read_page instead", errNoModel)
	}
	return s.askPage(ctx, "")
}

// AnswerQuestion answers a question about the active tab's main content
// with the model.
func (s *Surfer) AnswerQuestion(ctx context.Context, question string) (string, error) {
	if s.cfg.Model == nil {
		return "", toolErr("answer_question needs a model, and %v; use read_page instead", errNoModel)
	}
	return s.askPage(ctx, question)
}
