package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Limits applied to input fields whose struct tags set none, so that no
// field is ever unbounded.
const (
	// DefaultMaxLength caps a string field (in Unicode code points) that
	// has no maxLength in its schema tag.
	DefaultMaxLength = 10_000
	// DefaultMaxItems caps an array field that has no maxItems.
	DefaultMaxItems = 100
	// maxSafeInteger bounds every integer field: beyond 2^53 a JSON number
	// is not exact in most model runtimes.
	maxSafeInteger = 1 << 53
)

// ReasoningField is the optional string argument that every tool accepts.
// The model may explain its action there; Registry.Call takes it out of the
// arguments, hands it to the handler through the context (see [Reasoning])
// and reports it in [Result.Reasoning] for the journal.
const ReasoningField = "reasoning"

// ReasoningMaxLength caps the reasoning argument, in Unicode code points.
const ReasoningMaxLength = 8_000

const reasoningDescription = "Optional: why you take this action, in one or two sentences. Recorded in the journal; it does not change what the tool does."

// inferSchema derives the input schema of In from its json, jsonschema and
// schema struct tags, adds the reasoning argument and checks that the
// result uses only what the validator enforces. It returns an error for any
// problem; New turns that into a start-up panic.
func inferSchema(t reflect.Type) (s *jsonschema.Schema, ownReasoning bool, err error) {
	if t.Kind() != reflect.Struct {
		return nil, false, fmt.Errorf("input type %v is not a struct", t)
	}
	s, err = jsonschema.ForType(t, nil)
	if err != nil {
		return nil, false, err
	}
	if err := applyTags(t, s); err != nil {
		return nil, false, err
	}
	stripNull(s)
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	if p, ok := s.Properties[ReasoningField]; ok {
		if p.Type != "string" {
			return nil, false, fmt.Errorf("field %q must be a string", ReasoningField)
		}
		ownReasoning = true
	} else {
		s.Properties[ReasoningField] = &jsonschema.Schema{
			Type:        "string",
			Description: reasoningDescription,
			MaxLength:   jsonschema.Ptr(ReasoningMaxLength),
		}
		s.PropertyOrder = append([]string{ReasoningField}, s.PropertyOrder...)
	}
	applyDefaultLimits(s)
	if err := checkSupported(s, "input"); err != nil {
		return nil, false, err
	}
	if _, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
		return nil, false, fmt.Errorf("resolving schema: %w", err)
	}
	return s, ownReasoning, nil
}

// applyTags reads the `schema:"..."` tag of each field of struct type t and
// sets the matching constraints on the property schemas of s. Nested
// structs (and slices of them) are handled recursively.
//
// The tag is a comma-separated list of key=value pairs:
//
//	minimum, maximum, exclusiveMinimum, exclusiveMaximum   numbers
//	minLength, maxLength                                   strings
//	minItems, maxItems                                     arrays
//	enum=a|b|c                                             allowed values
//	default=<JSON value>                                   value used when the field is absent or null
//	items.<key>=...                                        any of the above, applied to array items
func applyTags(t reflect.Type, s *jsonschema.Schema) error {
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, ok := jsonName(f)
		if !ok {
			continue
		}
		p := s.Properties[name]
		if p == nil {
			continue
		}
		if tag, ok := f.Tag.Lookup("schema"); ok {
			if err := applyTag(p, tag); err != nil {
				return fmt.Errorf("field %s (%s): %w", f.Name, name, err)
			}
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			sub := p
			for sub.Items != nil {
				sub = sub.Items
			}
			if err := applyTags(ft, sub); err != nil {
				return err
			}
		}
	}
	return nil
}

func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, true
}

func applyTag(p *jsonschema.Schema, tag string) error {
	for kv := range strings.SplitSeq(tag, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		key, val, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("schema tag %q: want key=value", kv)
		}
		target := p
		if rest, ok := strings.CutPrefix(key, "items."); ok {
			if p.Items == nil {
				return fmt.Errorf("schema tag %q: field is not an array", kv)
			}
			target, key = p.Items, rest
		}
		if err := setKeyword(target, key, val); err != nil {
			return fmt.Errorf("schema tag %q: %w", kv, err)
		}
	}
	return nil
}

func setKeyword(p *jsonschema.Schema, key, val string) error {
	typ := p.Type
	if typ == "" {
		for _, t := range p.Types {
			if t != "null" {
				typ = t
			}
		}
	}
	numeric := typ == "integer" || typ == "number"
	num := func(dst **float64) error {
		if !numeric {
			return fmt.Errorf("%s applies to numbers, field is %s", key, typ)
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return err
		}
		*dst = &f
		return nil
	}
	count := func(dst **int, want string) error {
		if typ != want {
			return fmt.Errorf("%s applies to %ss, field is %s", key, want, typ)
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return fmt.Errorf("%s wants a count, got %q", key, val)
		}
		*dst = &n
		return nil
	}
	switch key {
	case "minimum":
		return num(&p.Minimum)
	case "maximum":
		return num(&p.Maximum)
	case "exclusiveMinimum":
		return num(&p.ExclusiveMinimum)
	case "exclusiveMaximum":
		return num(&p.ExclusiveMaximum)
	case "minLength":
		return count(&p.MinLength, "string")
	case "maxLength":
		return count(&p.MaxLength, "string")
	case "minItems":
		return count(&p.MinItems, "array")
	case "maxItems":
		return count(&p.MaxItems, "array")
	case "default":
		if !json.Valid([]byte(val)) {
			return fmt.Errorf("default %q is not a JSON value", val)
		}
		p.Default = json.RawMessage(val)
		return nil
	case "enum":
		p.Enum = nil
		for v := range strings.SplitSeq(val, "|") {
			var x any = v
			if typ != "string" {
				if err := json.Unmarshal([]byte(v), &x); err != nil {
					return fmt.Errorf("enum value %q: %w", v, err)
				}
			}
			p.Enum = append(p.Enum, x)
		}
		return nil
	}
	return fmt.Errorf("unknown key %q", key)
}

// stripNull removes "null" from inferred type unions: jsonschema-go makes
// slices and pointers nullable, but surf's calling convention is that null
// means "absent" for optional fields and is refused for required ones.
func stripNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Type == "" && len(s.Types) > 0 {
		ts := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
		if len(ts) == 1 {
			s.Type, s.Types = ts[0], nil
		} else {
			s.Types = ts
		}
	}
	for _, p := range s.Properties {
		stripNull(p)
	}
	stripNull(s.Items)
}

// applyDefaultLimits caps every string and array without an explicit cap.
func applyDefaultLimits(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	switch s.Type {
	case "string":
		if s.MaxLength == nil {
			s.MaxLength = jsonschema.Ptr(DefaultMaxLength)
		}
	case "array":
		if s.MaxItems == nil {
			s.MaxItems = jsonschema.Ptr(DefaultMaxItems)
		}
	}
	for _, p := range s.Properties {
		applyDefaultLimits(p)
	}
	applyDefaultLimits(s.Items)
}

// supportedKeywords are the schema keywords the validator in validate.go
// enforces. A schema using any other keyword is refused at registration so
// that no constraint is ever silently ignored.
var supportedKeywords = map[string]bool{
	"type": true, "description": true, "title": true, "default": true,
	"properties": true, "required": true, "additionalProperties": true,
	"items": true, "minItems": true, "maxItems": true,
	"enum": true, "minLength": true, "maxLength": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
}

func checkSupported(s *jsonschema.Schema, path string) error {
	if s == nil {
		return fmt.Errorf("%s: missing schema", path)
	}
	if s.Type == "" {
		return fmt.Errorf("%s: unsupported type %q (want one of object, array, string, integer, number, boolean)", path, typeName(s))
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: schema is not an object: %s", path, b)
	}
	for k := range m {
		if !supportedKeywords[k] {
			return fmt.Errorf("%s: unsupported schema keyword %q", path, k)
		}
	}
	switch s.Type {
	case "object":
		if s.AdditionalProperties == nil || !isFalseSchema(s.AdditionalProperties) {
			return fmt.Errorf("%s: objects must not allow additional properties", path)
		}
		for _, name := range s.Required {
			if s.Properties[name] == nil {
				return fmt.Errorf("%s: required property %q is not defined", path, name)
			}
		}
		if len(s.PropertyOrder) != len(s.Properties) {
			return fmt.Errorf("%s: property order does not list every property", path)
		}
		for _, name := range s.PropertyOrder {
			p := s.Properties[name]
			if p == nil {
				return fmt.Errorf("%s: property order names unknown property %q", path, name)
			}
			if err := checkSupported(p, path+"."+name); err != nil {
				return err
			}
		}
	case "array":
		if err := checkSupported(s.Items, path+"[]"); err != nil {
			return err
		}
	case "string", "integer", "number", "boolean":
		if s.Items != nil || s.Properties != nil {
			return fmt.Errorf("%s: %s schema with items or properties", path, s.Type)
		}
	default:
		return fmt.Errorf("%s: unsupported type %q (want one of object, array, string, integer, number, boolean)", path, typeName(s))
	}
	if s.Enum != nil && s.Type != "string" && s.Type != "integer" && s.Type != "number" {
		return fmt.Errorf("%s: enum is supported on strings and numbers only", path)
	}
	return nil
}

func typeName(s *jsonschema.Schema) string {
	if s.Type != "" {
		return s.Type
	}
	return strings.Join(s.Types, "|")
}

func isFalseSchema(s *jsonschema.Schema) bool {
	if s.Not == nil || !reflect.ValueOf(*s.Not).IsZero() {
		return false
	}
	c := *s
	c.Not = nil
	return reflect.ValueOf(c).IsZero()
}

func isRequired(s *jsonschema.Schema, name string) bool {
	return slices.Contains(s.Required, name)
}

// usage renders a one-line signature for error messages, for example
// click(target_id: integer, reasoning?: string).
func usage(name string, s *jsonschema.Schema) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('(')
	first := true
	// Required arguments first, then optional ones, each in declaration order.
	for pass := range 2 {
		for _, p := range s.PropertyOrder {
			req := isRequired(s, p)
			if (pass == 0) != req {
				continue
			}
			if !first {
				b.WriteString(", ")
			}
			first = false
			b.WriteString(p)
			if !req {
				b.WriteByte('?')
			}
			b.WriteString(": ")
			b.WriteString(shortType(s.Properties[p]))
		}
	}
	b.WriteByte(')')
	return b.String()
}

func shortType(s *jsonschema.Schema) string {
	switch s.Type {
	case "array":
		return shortType(s.Items) + "[]"
	case "object":
		return "object"
	}
	if s.Enum != nil {
		var vals []string
		for _, v := range s.Enum {
			b, _ := json.Marshal(v)
			vals = append(vals, string(b))
		}
		return strings.Join(vals, "|")
	}
	return s.Type
}

// strictSchema rewrites a canonical input schema into the subset OpenAI's
// strict function calling accepts: every property is listed as required,
// optional ones become nullable (null means "use the default"), and the
// keywords strict mode rejects (minLength, maxLength, default) move into
// the description so the model still reads them. The registry enforces the
// original limits whichever schema the model saw.
func strictSchema(s *jsonschema.Schema, optional bool) *jsonschema.Schema {
	c := &jsonschema.Schema{
		Type:             s.Type,
		Description:      s.Description,
		Title:            s.Title,
		Minimum:          s.Minimum,
		Maximum:          s.Maximum,
		ExclusiveMinimum: s.ExclusiveMinimum,
		ExclusiveMaximum: s.ExclusiveMaximum,
		MinItems:         s.MinItems,
		MaxItems:         s.MaxItems,
		Enum:             slices.Clone(s.Enum),
	}
	var notes []string
	if s.MinLength != nil && *s.MinLength > 0 {
		if *s.MinLength == 1 {
			notes = append(notes, "must not be empty")
		} else {
			notes = append(notes, fmt.Sprintf("at least %d characters", *s.MinLength))
		}
	}
	if s.MaxLength != nil {
		notes = append(notes, fmt.Sprintf("at most %d characters", *s.MaxLength))
	}
	if optional {
		if s.Default != nil {
			notes = append(notes, fmt.Sprintf("null means the default, %s", s.Default))
		} else {
			notes = append(notes, "null if not needed")
		}
	}
	if len(notes) > 0 {
		d := strings.TrimSpace(c.Description)
		if d != "" && !strings.HasSuffix(d, ".") {
			d += "."
		}
		if d != "" {
			d += " "
		}
		c.Description = d + "(" + strings.Join(notes, "; ") + ")"
	}
	switch s.Type {
	case "object":
		c.Properties = make(map[string]*jsonschema.Schema, len(s.Properties))
		c.PropertyOrder = slices.Clone(s.PropertyOrder)
		c.Required = slices.Clone(s.PropertyOrder)
		c.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
		for _, name := range s.PropertyOrder {
			c.Properties[name] = strictSchema(s.Properties[name], !isRequired(s, name))
		}
	case "array":
		c.Items = strictSchema(s.Items, false)
	}
	if optional {
		c.Types = []string{c.Type, "null"}
		c.Type = ""
		if c.Enum != nil {
			c.Enum = append(c.Enum, nil)
		}
	}
	return c
}
