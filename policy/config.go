package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Config is a policy as written in a YAML file. The zero Config is the safe
// default: any public host over http(s)/ws(s), private networks denied, no
// action rules, no secrets. See the package documentation for the syntax.
type Config struct {
	// Allow lists the hosts that may be reached. Empty means any public
	// host (as if it held "*").
	Allow []HostRule `json:"allow,omitempty" yaml:"allow,omitempty"`
	// Ask lists hosts that may be reached only with approval (Ask): they
	// are allowed like allow entries, but each decision on them is Ask.
	Ask []HostRule `json:"ask,omitempty" yaml:"ask,omitempty"`
	// Deny lists hosts that may never be reached; deny wins over allow.
	Deny []HostRule `json:"deny,omitempty" yaml:"deny,omitempty"`
	// Actions are per-tool rules that deny an action or require approval.
	Actions []ActionRule `json:"actions,omitempty" yaml:"actions,omitempty"`
	// Secrets are named values the model refers to by placeholder.
	Secrets []Secret `json:"secrets,omitempty" yaml:"secrets,omitempty"`
}

// String describes the configuration as JSON, with secret values redacted.
func (c Config) String() string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return "policy.Config{" + err.Error() + "}"
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// ActionRule denies a tool or requires approval for it, optionally only for
// some target elements or pages. Every condition that is set must hold.
type ActionRule struct {
	// Rule names the rule in decisions; default "actions[N]".
	Rule string `json:"rule,omitempty" yaml:"rule,omitempty"`
	// Tools are the tool names the rule applies to; "*" is any tool.
	Tools []string `json:"tool" yaml:"tool"`
	// Role matches the target element's ARIA role (case-insensitive).
	Role string `json:"role,omitempty" yaml:"role,omitempty"`
	// Name is a regular expression (RE2) matched against the target
	// element's accessible name.
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
	// InputType matches the target's input type, e.g. "password"
	// (case-insensitive).
	InputType string `json:"input_type,omitempty" yaml:"input_type,omitempty"`
	// Hosts limits the rule to pages whose URL matches one of these host
	// rules.
	Hosts []HostRule `json:"hosts,omitempty" yaml:"hosts,omitempty"`
	// Verdict is Deny or Ask.
	Verdict Verdict `json:"verdict" yaml:"verdict"`
	// Reason is added to the decision's reason.
	Reason string `json:"reason,omitempty" yaml:"reason,omitempty"`
}

// Secret is a named value that the model only sees as the placeholder
// <secret:NAME>. Exactly one of Value, Env and File is set in a file;
// loading resolves Env and File into Value.
type Secret struct {
	Name  string      `json:"name" yaml:"name"`
	Value SecretValue `json:"value,omitempty" yaml:"value,omitempty"`
	Env   string      `json:"env,omitempty" yaml:"env,omitempty"`
	File  string      `json:"file,omitempty" yaml:"file,omitempty"`
	// Hosts are where the secret may be typed: host rules matched against
	// the host the action happens on.
	Hosts []HostRule `json:"hosts" yaml:"hosts"`
}

// SecretValue is a secret's value. It never formats or marshals as itself:
// fmt, JSON and YAML all show "<redacted>".
type SecretValue string

const redacted = "<redacted>"

// String returns "<redacted>".
func (SecretValue) String() string { return redacted }

// GoString returns "<redacted>".
func (SecretValue) GoString() string { return redacted }

// Format prints "<redacted>" for every verb.
func (SecretValue) Format(f fmt.State, _ rune) { io.WriteString(f, redacted) }

// MarshalJSON encodes "<redacted>".
func (SecretValue) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalYAML encodes "<redacted>".
func (SecretValue) MarshalYAML() (any, error) { return redacted, nil }

// Reveal returns the value itself.
func (v SecretValue) Reveal() string { return string(v) }

// ConfigError is a problem in a policy file, with its position.
type ConfigError struct {
	File   string
	Line   int // 1-based; 0 when unknown
	Column int
	Msg    string
}

func (e *ConfigError) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// LoadOptions says how a policy file's secrets are resolved. The library
// never reads the process environment itself.
type LoadOptions struct {
	// Getenv resolves "env:" secrets. Nil makes any "env:" secret an error.
	Getenv func(string) string
	// Dir is the directory relative "file:" secrets are read from. Load
	// sets it to the policy file's directory when empty.
	Dir string
}

// Load reads and validates a YAML policy file.
func Load(path string, opts LoadOptions) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading policy: %w", err)
	}
	if opts.Dir == "" {
		opts.Dir = filepath.Dir(path)
	}
	return LoadBytes(path, data, opts)
}

// LoadBytes parses and validates a YAML policy; name is used in errors.
// Unknown keys, bad patterns, bad regular expressions and unresolvable
// secrets are errors that give the line and column.
func LoadBytes(name string, data []byte, opts LoadOptions) (Config, error) {
	d := &decoder{file: name, opts: opts}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Config{}, nil
		}
		return Config{}, d.yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			return Config{}, d.yamlError(err)
		}
		return Config{}, &ConfigError{File: name, Line: line, Msg: "more than one YAML document"}
	}
	cfg, err := d.config(&doc)
	if err != nil {
		return Config{}, err
	}
	if _, err := New(cfg); err != nil {
		// Everything New checks was checked with positions above; this is
		// a safety net.
		return Config{}, &ConfigError{File: name, Msg: err.Error()}
	}
	return cfg, nil
}

type decoder struct {
	file string
	opts LoadOptions
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (d *decoder) yamlError(err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &ConfigError{File: d.file, Line: line, Msg: m[2]}
	}
	return &ConfigError{File: d.file, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

func (d *decoder) errf(n *yaml.Node, format string, args ...any) error {
	return &ConfigError{File: d.file, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// mapping walks a mapping node, rejecting unknown and duplicate keys.
func (d *decoder) mapping(n *yaml.Node, what string, known []string, f func(key string, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return d.errf(n, "%s must be a mapping", what)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return d.errf(k, "%s: keys must be strings", what)
		}
		if !containsString(known, k.Value) {
			return d.errf(k, "%s: unknown key %q (known keys: %s)", what, k.Value, strings.Join(known, ", "))
		}
		if seen[k.Value] {
			return d.errf(k, "%s: key %q given twice", what, k.Value)
		}
		seen[k.Value] = true
		if err := f(k.Value, v); err != nil {
			return err
		}
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// list returns the items of a sequence; a single scalar counts as a list of
// one when single is true.
func (d *decoder) list(n *yaml.Node, what string, single bool) ([]*yaml.Node, error) {
	switch {
	case isNull(n):
		return nil, nil
	case n.Kind == yaml.SequenceNode:
		return n.Content, nil
	case single && n.Kind == yaml.ScalarNode:
		return []*yaml.Node{n}, nil
	}
	return nil, d.errf(n, "%s must be a list", what)
}

func (d *decoder) scalar(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return "", d.errf(n, "%s must be a string", what)
	}
	return n.Value, nil
}

func (d *decoder) strings(n *yaml.Node, what string) ([]string, error) {
	items, err := d.list(n, what, true)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, it := range items {
		s, err := d.scalar(it, what)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (d *decoder) config(doc *yaml.Node) (Config, error) {
	var cfg Config
	n := doc
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return cfg, nil
		}
		n = n.Content[0]
	}
	if isNull(n) {
		return cfg, nil
	}
	err := d.mapping(n, "policy", []string{"allow", "ask", "deny", "actions", "secrets"}, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "allow":
			cfg.Allow, err = d.hostRules(v, "allow")
		case "ask":
			cfg.Ask, err = d.hostRules(v, "ask")
		case "deny":
			cfg.Deny, err = d.hostRules(v, "deny")
		case "actions":
			cfg.Actions, err = d.actions(v)
		case "secrets":
			cfg.Secrets, err = d.secrets(v)
		}
		return err
	})
	return cfg, err
}

func (d *decoder) hostRules(n *yaml.Node, what string) ([]HostRule, error) {
	items, err := d.list(n, what, true)
	if err != nil {
		return nil, err
	}
	var out []HostRule
	for i, it := range items {
		where := fmt.Sprintf("%s[%d]", what, i)
		r, err := d.hostRule(it, where)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (d *decoder) hostRule(n *yaml.Node, where string) (HostRule, error) {
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		r, err := ParseHostRule(n.Value)
		if err != nil {
			return HostRule{}, d.errf(n, "%s: %v", where, err)
		}
		return r, nil
	}
	var r HostRule
	err := d.mapping(n, where, []string{"host", "ports", "paths", "schemes"}, func(key string, v *yaml.Node) error {
		switch key {
		case "host":
			s, err := d.scalar(v, where+".host")
			if err != nil {
				return err
			}
			r.Host = s
		case "ports":
			items, err := d.list(v, where+".ports", true)
			if err != nil {
				return err
			}
			for _, it := range items {
				p, err := parsePort(it.Value)
				if err != nil || it.Kind != yaml.ScalarNode {
					return d.errf(it, "%s.ports: bad port %q", where, it.Value)
				}
				r.Ports = append(r.Ports, p)
			}
		case "paths":
			ps, err := d.strings(v, where+".paths")
			if err != nil {
				return err
			}
			for _, p := range ps {
				if _, err := compilePath(p); err != nil {
					return d.errf(v, "%s.paths: %v", where, err)
				}
			}
			r.Paths = ps
		case "schemes":
			ss, err := d.strings(v, where+".schemes")
			if err != nil {
				return err
			}
			r.Schemes = ss
		}
		return nil
	})
	if err != nil {
		return HostRule{}, err
	}
	if r.Host == "" {
		return HostRule{}, d.errf(n, "%s: missing host", where)
	}
	if _, err := compileHostRule(r); err != nil {
		return HostRule{}, d.errf(n, "%s: %v", where, err)
	}
	return r, nil
}

func (d *decoder) actions(n *yaml.Node) ([]ActionRule, error) {
	items, err := d.list(n, "actions", false)
	if err != nil {
		return nil, err
	}
	var out []ActionRule
	for i, it := range items {
		where := fmt.Sprintf("actions[%d]", i)
		var r ActionRule
		verdictSet := false
		err := d.mapping(it, where, []string{"rule", "tool", "role", "name", "input_type", "hosts", "verdict", "reason"}, func(key string, v *yaml.Node) error {
			var err error
			switch key {
			case "rule":
				r.Rule, err = d.scalar(v, where+".rule")
			case "tool":
				r.Tools, err = d.strings(v, where+".tool")
			case "role":
				r.Role, err = d.scalar(v, where+".role")
			case "name":
				r.Name, err = d.scalar(v, where+".name")
				if err == nil {
					if _, rerr := regexp.Compile(r.Name); rerr != nil {
						err = d.errf(v, "%s.name: bad regular expression: %v", where, rerr)
					}
				}
			case "input_type":
				r.InputType, err = d.scalar(v, where+".input_type")
			case "hosts":
				r.Hosts, err = d.hostRules(v, where+".hosts")
			case "verdict":
				var s string
				s, err = d.scalar(v, where+".verdict")
				if err == nil {
					switch s {
					case "deny":
						r.Verdict = Deny
					case "ask":
						r.Verdict = Ask
					default:
						err = d.errf(v, "%s.verdict: %q is not deny or ask", where, s)
					}
					verdictSet = true
				}
			case "reason":
				r.Reason, err = d.scalar(v, where+".reason")
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(r.Tools) == 0 {
			return nil, d.errf(it, "%s: missing tool (a tool name, a list of them, or \"*\")", where)
		}
		if !verdictSet {
			return nil, d.errf(it, "%s: missing verdict (deny or ask)", where)
		}
		out = append(out, r)
	}
	return out, nil
}

var secretName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (d *decoder) secrets(n *yaml.Node) ([]Secret, error) {
	items, err := d.list(n, "secrets", false)
	if err != nil {
		return nil, err
	}
	var out []Secret
	names := map[string]bool{}
	for i, it := range items {
		where := fmt.Sprintf("secrets[%d]", i)
		var s Secret
		var valueNode *yaml.Node
		err := d.mapping(it, where, []string{"name", "value", "env", "file", "hosts"}, func(key string, v *yaml.Node) error {
			var err error
			switch key {
			case "name":
				s.Name, err = d.scalar(v, where+".name")
				if err == nil && !secretName.MatchString(s.Name) {
					err = d.errf(v, "%s.name: %q is not a valid secret name (letters, digits and '_', not starting with a digit)", where, s.Name)
				}
			case "value":
				var val string
				val, err = d.scalar(v, where+".value")
				s.Value, valueNode = SecretValue(val), v
			case "env":
				s.Env, err = d.scalar(v, where+".env")
				valueNode = v
			case "file":
				s.File, err = d.scalar(v, where+".file")
				valueNode = v
			case "hosts":
				s.Hosts, err = d.hostRules(v, where+".hosts")
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if s.Name == "" {
			return nil, d.errf(it, "%s: missing name", where)
		}
		if names[s.Name] {
			return nil, d.errf(it, "%s: secret %s defined twice", where, s.Name)
		}
		names[s.Name] = true
		if len(s.Hosts) == 0 {
			return nil, d.errf(it, "%s: secret %s needs hosts (where it may be used)", where, s.Name)
		}
		set := 0
		for _, b := range []bool{s.Value != "", s.Env != "", s.File != ""} {
			if b {
				set++
			}
		}
		if set != 1 || valueNode == nil {
			return nil, d.errf(it, "%s: secret %s needs exactly one of value, env and file", where, s.Name)
		}
		switch {
		case s.Env != "":
			if d.opts.Getenv == nil {
				return nil, d.errf(valueNode, "%s: secret %s comes from the environment, but no environment was given to the loader", where, s.Name)
			}
			v := d.opts.Getenv(s.Env)
			if v == "" {
				return nil, d.errf(valueNode, "%s: secret %s: environment variable %s is empty or unset", where, s.Name, s.Env)
			}
			s.Value = SecretValue(v)
		case s.File != "":
			p := s.File
			if !filepath.IsAbs(p) && d.opts.Dir != "" {
				p = filepath.Join(d.opts.Dir, p)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, d.errf(valueNode, "%s: secret %s: %v", where, s.Name, err)
			}
			v := strings.TrimRight(string(b), "\r\n")
			if v == "" {
				return nil, d.errf(valueNode, "%s: secret %s: file %s is empty", where, s.Name, s.File)
			}
			s.Value = SecretValue(v)
		}
		out = append(out, s)
	}
	return out, nil
}
