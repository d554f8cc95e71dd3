package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func exampleEnv(name string) string {
	if name == "SURF_EXAMPLE_API_TOKEN" {
		return "tok-123456"
	}
	return ""
}

func loadExample(t testing.TB) (Config, *Policy) {
	t.Helper()
	cfg, err := Load("testdata/example.yaml", LoadOptions{Getenv: exampleEnv})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, p
}

func TestLoadExample(t *testing.T) {
	cfg, p := loadExample(t)
	if len(cfg.Allow) != 9 || len(cfg.Ask) != 1 || len(cfg.Deny) != 3 || len(cfg.Actions) != 4 || len(cfg.Secrets) != 3 {
		t.Fatalf("loaded %d allow, %d ask, %d deny, %d actions, %d secrets", len(cfg.Allow), len(cfg.Ask), len(cfg.Deny), len(cfg.Actions), len(cfg.Secrets))
	}
	if got := cfg.Secrets[2].Value.Reveal(); got != "file-secret-value" {
		t.Errorf("file secret = %q", got)
	}
	if got := cfg.Secrets[1].Value.Reveal(); got != "tok-123456" {
		t.Errorf("env secret = %q", got)
	}
	N := Navigation
	runURLCases(t, p, []urlCase{
		{N, "https://example.com/", "", Allow, RuleAllow, ""},
		{N, "https://www.example.com/", "", Allow, RuleAllow, ""},
		{N, "https://ads.example.com/", "", Deny, RuleDeny, ""},
		{N, "https://x.tracker.example.com/", "", Deny, RuleDeny, ""},
		{N, "https://example.com/admin/", "", Deny, RuleDeny, ""},
		{N, "https://docs.example.org/guide/a", "", Allow, RuleAllow, ""},
		{N, "https://docs.example.org/", "", Deny, RuleAllow, ""},
		{N, "https://shop.example.com/cart/1", "", Allow, RuleAllow, ""},
		{N, "https://shop.example.com/checkout", "", Allow, RuleAllow, ""},
		{N, "http://secure.example.net/", "", Deny, RuleAllow, ""},
		{N, "https://api.example.net/", "", Deny, RuleAllow, ""},
		{N, "http://127.0.0.1:8080/", "", Allow, RuleAllow, ""},
		{N, "http://10.20.30.40/", "", Allow, RuleAllow, ""},
		{N, "http://10.21.0.1/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://localhost:3000/", "", Allow, RuleAllow, ""},
		{N, "https://elsewhere.test/", "", Deny, RuleAllow, ""},
		{N, "https://www.bank.example/", "", Ask, RuleAsk, ""},
	})
}

func TestActionRules(t *testing.T) {
	_, p := loadExample(t)
	for _, c := range []struct {
		a       Action
		verdict Verdict
		rule    string
	}{
		{Action{Tool: "upload_file", URL: "https://example.com/"}, Deny, "no-uploads"},
		{Action{Tool: "input_text", Target: &Element{Role: "textbox", Name: "Password", InputType: "password"}}, Ask, "passwords"},
		{Action{Tool: "input_text", URL: "https://example.com/", Target: &Element{Role: "textbox", Name: "Search", InputType: "search"}}, Allow, ""},
		{Action{Tool: "click", Target: &Element{Role: "button", Name: "Buy now"}}, Ask, "purchases"},
		{Action{Tool: "click", Target: &Element{Role: "link", Name: "Proceed to CHECKOUT"}}, Ask, "purchases"},
		{Action{Tool: "click", Target: &Element{Role: "button", Name: "Delete account"}}, Ask, "purchases"},
		{Action{Tool: "click", URL: "https://example.com/", Target: &Element{Role: "button", Name: "Buyers guide"}}, Allow, ""},
		{Action{Tool: "click", URL: "https://example.com/", Target: &Element{Role: "link", Name: "Next page"}}, Allow, ""},
		// No page URL known: the page condition cannot be checked, so the rule applies.
		{Action{Tool: "click", Target: &Element{Role: "link", Name: "Next page"}}, Ask, "bank-anything"},
		// No target known: target conditions cannot be checked, so the rule applies.
		{Action{Tool: "click"}, Ask, "purchases"},
		{Action{Tool: "scroll_down", URL: "https://www.bank.example/"}, Ask, "bank-anything"},
		{Action{Tool: "scroll_down", URL: "https://example.com/"}, Allow, ""},
		{Action{Tool: "upload_file", URL: "https://www.bank.example/"}, Deny, "no-uploads"},
	} {
		d := p.DecideAction(c.a)
		if d.Verdict != c.verdict || d.Rule != c.rule {
			t.Errorf("DecideAction(%+v) = %s rule %q (%s), want %s rule %q", c.a, d.Verdict, d.Rule, d.Reason, c.verdict, c.rule)
		}
		if d.Tool != c.a.Tool {
			t.Errorf("DecideAction(%+v).Tool = %q", c.a, d.Tool)
		}
	}
	d := p.DecideAction(Action{Tool: "upload_file"})
	if want := "denied: upload_file is not allowed (rule no-uploads): uploads are not part of this task"; d.Reason != want {
		t.Errorf("reason = %q, want %q", d.Reason, want)
	}
	d = p.DecideAction(Action{Tool: "click", Target: &Element{Role: "button", Name: "Buy now"}})
	if want := `approval needed: click on button "Buy now" (rule purchases)`; d.Reason != want {
		t.Errorf("reason = %q, want %q", d.Reason, want)
	}
	// The zero Config has no action rules.
	if d := MustNew(Config{}).DecideAction(Action{Tool: "upload_file"}); d.Verdict != Allow {
		t.Errorf("zero config upload_file = %s", d.Verdict)
	}
}

func TestLoadEmpty(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "~\n", "{}\n", "allow: []\n"} {
		cfg, err := LoadBytes("p.yaml", []byte(src), LoadOptions{})
		if err != nil {
			t.Errorf("LoadBytes(%q): %v", src, err)
			continue
		}
		if len(cfg.Allow)+len(cfg.Deny)+len(cfg.Actions)+len(cfg.Secrets) != 0 {
			t.Errorf("LoadBytes(%q) = %v, want the zero Config", src, cfg)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	for _, c := range []struct {
		src  string
		want string // "file:line:col: message" prefix or substring
	}{
		{"alow:\n  - example.com\n", `p.yaml:1:1: policy: unknown key "alow"`},
		{"allow:\n  - example.com\n  - exa mple.com\n", `p.yaml:3:5: allow[1]: host pattern "exa mple.com"`},
		{"allow:\n  - host: example.com\n    port: 80\n", `p.yaml:3:5: allow[0]: unknown key "port"`},
		{"allow:\n  - host: example.com\n    ports: [80, 99999]\n", `p.yaml:3:17: allow[0].ports: bad port "99999"`},
		{"allow:\n  - ports: [80]\n", `p.yaml:2:5: allow[0]: missing host`},
		{"allow: example.com\ndeny:\n  - 'ex*.com'\n", `p.yaml:3:5: deny[0]: host pattern "ex*.com": '*' is only allowed`},
		{"allow:\n  - a.com\nallow:\n  - b.com\n", `p.yaml:3:1: policy: key "allow" given twice`},
		{"actions:\n  - tool: click\n    name: '(unclosed'\n    verdict: ask\n", `p.yaml:3:11: actions[0].name: bad regular expression`},
		{"actions:\n  - tool: click\n    verdict: maybe\n", `p.yaml:3:14: actions[0].verdict: "maybe" is not deny or ask`},
		{"actions:\n  - tool: click\n", `p.yaml:2:5: actions[0]: missing verdict`},
		{"actions:\n  - verdict: deny\n", `p.yaml:2:5: actions[0]: missing tool`},
		{"actions:\n  - tool: click\n    verdict: deny\n    colour: red\n", `p.yaml:4:5: actions[0]: unknown key "colour"`},
		{"secrets:\n  - name: X\n    value: v\n", `p.yaml:2:5: secrets[0]: secret X needs hosts`},
		{"secrets:\n  - name: 1X\n    value: v\n    hosts: [a.com]\n", `p.yaml:2:11: secrets[0].name: "1X" is not a valid secret name`},
		{"secrets:\n  - name: X\n    value: v\n    env: E\n    hosts: [a.com]\n", `p.yaml:2:5: secrets[0]: secret X needs exactly one of value, env and file`},
		{"secrets:\n  - name: X\n    env: E\n    hosts: [a.com]\n", `p.yaml:3:10: secrets[0]: secret X comes from the environment`},
		{"secrets:\n  - name: X\n    value: v\n    hosts: ['*']\n", `p.yaml: secrets[0]: secret X: hosts[0]: a secret needs named hosts`},
		{"secrets:\n  - name: X\n    file: does-not-exist.txt\n    hosts: [a.com]\n", `p.yaml:3:11: secrets[0]: secret X: open`},
		{"allow: [a.com\n", `p.yaml:1: did not find expected ',' or ']'`},
		{"allow:\n  - a.com\n---\ndeny: []\n", `p.yaml:3: more than one YAML document`},
		{"- a.com\n", `p.yaml:1:1: policy must be a mapping`},
		{"allow:\n  x: y\n", `p.yaml:2:3: allow must be a list`},
	} {
		_, err := LoadBytes("p.yaml", []byte(c.src), LoadOptions{})
		if err == nil {
			t.Errorf("LoadBytes(%q) succeeded, want error %q", c.src, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadBytes(%q) error = %q, want it to contain %q", c.src, err, c.want)
		}
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("LoadBytes(%q) error %T is not a *ConfigError", c.src, err)
		}
	}
}

func TestLoadSecretEnvAndFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "key.txt"), []byte("from-file\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := "secrets:\n  - name: A\n    env: MY_A\n    hosts: [a.test]\n  - name: B\n    file: key.txt\n    hosts: [b.test]\n"
	getenv := func(k string) string {
		if k == "MY_A" {
			return "from-env"
		}
		return ""
	}
	cfg, err := LoadBytes("p.yaml", []byte(src), LoadOptions{Getenv: getenv, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Secrets[0].Value.Reveal() != "from-env" || cfg.Secrets[1].Value.Reveal() != "from-file" {
		t.Errorf("secrets = %q, %q", cfg.Secrets[0].Value.Reveal(), cfg.Secrets[1].Value.Reveal())
	}
	_, err = LoadBytes("p.yaml", []byte(src), LoadOptions{Getenv: func(string) string { return "" }, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "MY_A is empty or unset") {
		t.Errorf("unset env: err = %v", err)
	}
}

func TestSecretValuesNeverPrinted(t *testing.T) {
	cfg, p := loadExample(t)
	values := []string{"correct horse battery staple", "tok-123456", "file-secret-value"}
	var outputs []string
	outputs = append(outputs, cfg.String(), fmt.Sprint(cfg), fmt.Sprintf("%v %+v %#v %s %q %x", cfg, cfg, cfg, cfg.Secrets[0].Value, cfg.Secrets[0].Value, cfg.Secrets[0].Value))
	j, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(j))
	y, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(y), fmt.Sprintf("%v %+v", p, *p))
	for _, out := range outputs {
		for _, v := range values {
			if strings.Contains(out, v) {
				t.Errorf("secret value %q printed in %q", v, out)
			}
		}
	}
	if !strings.Contains(cfg.String(), "SHOP_PASSWORD") || !strings.Contains(cfg.String(), redacted) {
		t.Errorf("Config.String() = %q, want the names and %q", cfg.String(), redacted)
	}
}
