package perception

import (
	"encoding/json"
	"fmt"
	"github.com/surfkit/surf/internal/textcut"
	"sort"
	"strings"
)

// extractMetadata reads the page's description, OpenGraph tags and JSON-LD
// from the main document of a snapshot.
func extractMetadata(s *Snapshot) *Metadata {
	if len(s.docs) == 0 {
		return nil
	}
	md := &Metadata{OpenGraph: map[string]string{}}
	for _, n := range s.docs[0].nodes {
		switch n.name {
		case "META":
			content := strings.TrimSpace(n.attrOr("content"))
			if content == "" {
				continue
			}
			name := strings.ToLower(n.attrOr("name"))
			prop := strings.ToLower(n.attrOr("property"))
			switch {
			case name == "description" && md.Description == "":
				md.Description = textcut.Bytes(content, 300)
			case strings.HasPrefix(prop, "og:") && len(md.OpenGraph) < 12:
				md.OpenGraph[prop] = textcut.Bytes(content, 200)
			}
		case "SCRIPT":
			if !strings.EqualFold(strings.TrimSpace(n.attrOr("type")), "application/ld+json") || len(md.JSONLD) >= 4 {
				continue
			}
			var src strings.Builder
			for _, c := range n.children {
				if c.nodeType == 3 {
					src.WriteString(c.value)
				}
			}
			if sum := summarizeJSONLD(src.String()); sum != "" {
				md.JSONLD = append(md.JSONLD, sum)
			}
		}
	}
	if md.Description == "" && len(md.OpenGraph) == 0 && len(md.JSONLD) == 0 {
		return nil
	}
	return md
}

func (m *Metadata) Fingerprint() string {
	b, _ := json.Marshal(m)
	return string(b)
}

// line renders the metadata for the model, compactly.
func (m *Metadata) line() string {
	var parts []string
	if m.Description != "" {
		parts = append(parts, "description "+Quote(m.Description, 200))
	}
	keys := make([]string, 0, len(m.OpenGraph))
	for k := range m.OpenGraph {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "og:description" && m.OpenGraph[k] == m.Description {
			continue
		}
		parts = append(parts, k+" "+Quote(m.OpenGraph[k], 80))
	}
	for _, j := range m.JSONLD {
		parts = append(parts, "json-ld "+Quote(j, 200))
	}
	if len(parts) == 0 {
		return ""
	}
	return "metadata: " + strings.Join(parts, "; ")
}

// jsonLDFields are the properties worth telling the model, in order.
var jsonLDFields = []string{"name", "headline", "description", "datePublished", "author", "price", "priceCurrency", "offers", "address", "telephone", "openingHours", "ratingValue", "aggregateRating", "startDate", "location"}

// summarizeJSONLD reduces a JSON-LD block to "Type: key value, ..." for the
// first few objects it holds.
func summarizeJSONLD(src string) string {
	var v any
	if err := json.Unmarshal([]byte(src), &v); err != nil {
		return ""
	}
	var objs []map[string]any
	var collect func(x any, d int)
	collect = func(x any, d int) {
		if d > 3 || len(objs) >= 3 {
			return
		}
		switch t := x.(type) {
		case []any:
			for _, e := range t {
				collect(e, d+1)
			}
		case map[string]any:
			if g, ok := t["@graph"]; ok {
				collect(g, d+1)
				return
			}
			if _, ok := t["@type"]; ok {
				objs = append(objs, t)
			}
		}
	}
	collect(v, 0)
	var out []string
	for _, o := range objs {
		var parts []string
		for _, k := range jsonLDFields {
			if val, ok := o[k]; ok {
				if s := ldValue(val, 0); s != "" {
					parts = append(parts, k+" "+textcut.Bytes(s, 80))
				}
			}
		}
		out = append(out, fmt.Sprintf("%v: %s", ldValue(o["@type"], 0), strings.Join(parts, ", ")))
	}
	return textcut.Bytes(strings.Join(out, " | "), 400)
}

func ldValue(v any, d int) string {
	if d > 2 {
		return ""
	}
	switch t := v.(type) {
	case string:
		return strings.Join(strings.Fields(t), " ")
	case float64, bool:
		return fmt.Sprint(t)
	case []any:
		var parts []string
		for i, e := range t {
			if i == 3 {
				break
			}
			if s := ldValue(e, d+1); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		for _, k := range []string{"name", "price", "ratingValue", "streetAddress", "@id"} {
			if x, ok := t[k]; ok {
				s := ldValue(x, d+1)
				if k == "price" {
					if c, ok := t["priceCurrency"].(string); ok {
						s += " " + c
					}
				}
				return s
			}
		}
	}
	return ""
}
