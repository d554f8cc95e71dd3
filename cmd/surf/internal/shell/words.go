package shell

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/surfkit/surf/tools"
)

// ToolArgs maps a line's words after the tool's name onto the input
// struct of the tool called name, as JSON: positional words fill the
// fields in order (a list field takes all the rest up to the next --flag),
// --name=value or --name value sets a field by its JSON name, and a bare
// --name sets a boolean field to true.
func ToolArgs(name string, words []string) (json.RawMessage, error) {
	typ, ok := tools.CatalogInput(name)
	if !ok {
		return nil, fmt.Errorf("unknown action %q", name)
	}
	type field struct {
		name string
		kind reflect.Type
	}
	var fields []field
	byName := map[string]reflect.Type{}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		jn := strings.Split(f.Tag.Get("json"), ",")[0]
		if jn == "" || jn == "-" {
			continue
		}
		fields = append(fields, field{jn, f.Type})
		byName[jn] = f.Type
	}
	byName["reasoning"] = reflect.TypeOf("")
	out := map[string]any{}
	pos := 0
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "--") {
			k, v, hasV := strings.Cut(w[2:], "=")
			t, ok := byName[k]
			if !ok {
				return nil, fmt.Errorf("%s has no argument %q", name, k)
			}
			if !hasV {
				if t.Kind() == reflect.Bool {
					v = "true"
				} else if i+1 < len(words) {
					i++
					v = words[i]
				} else {
					return nil, fmt.Errorf("--%s needs a value", k)
				}
			}
			val, err := convert(k, t, []string{v})
			if err != nil {
				return nil, err
			}
			out[k] = val
			continue
		}
		if pos >= len(fields) {
			return nil, fmt.Errorf("%s takes %d arguments; %q is one too many", name, len(fields), w)
		}
		f := fields[pos]
		pos++
		if f.kind.Kind() == reflect.Slice {
			rest := []string{w}
			for i+1 < len(words) && !strings.HasPrefix(words[i+1], "--") {
				i++
				rest = append(rest, words[i])
			}
			val, err := convert(f.name, f.kind, rest)
			if err != nil {
				return nil, err
			}
			out[f.name] = val
			continue
		}
		val, err := convert(f.name, f.kind, []string{w})
		if err != nil {
			return nil, err
		}
		out[f.name] = val
	}
	return json.Marshal(out)
}

func convert(name string, t reflect.Type, vs []string) (any, error) {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, err := strconv.Atoi(vs[0])
		if err != nil {
			return nil, fmt.Errorf("%s must be a whole number, not %q", name, vs[0])
		}
		return n, nil
	case reflect.Float64, reflect.Float32:
		f, err := strconv.ParseFloat(vs[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%s must be a number, not %q", name, vs[0])
		}
		return f, nil
	case reflect.Bool:
		b, err := strconv.ParseBool(vs[0])
		if err != nil {
			return nil, fmt.Errorf("%s must be true or false, not %q", name, vs[0])
		}
		return b, nil
	case reflect.Slice:
		return vs, nil
	default:
		return vs[0], nil
	}
}

// SplitWords splits a line like a shell: spaces and tabs separate words,
// quotes (single or double) group them, and a backslash escapes the next
// character (not inside single quotes). An unclosed quote or a trailing
// backslash is an error.
func SplitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	esc := false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case r == '\\' && quote != '\'':
			esc, inWord = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote", quote)
	}
	if esc {
		return nil, errors.New("a line cannot end with a backslash")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// Quote quotes s as one word of a line, which SplitWords gives back as
// it is: in single quotes, where nothing is special but the closing quote;
// each single quote of s closes the quotes, is escaped with a backslash,
// and opens them again.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
