package policycheck_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/surfkit/surf/cmd/surf/internal/policycheck"
	"github.com/surfkit/surf/policy"
)

func check(t testing.TB, in string) []policycheck.Line {
	t.Helper()
	p, err := policy.New(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var out []policycheck.Line
	err = policycheck.Stdin(context.Background(), strings.NewReader(in), p, "", policy.Navigation,
		func(l policycheck.Line) error { out = append(out, l); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStdin(t *testing.T) {
	long := `{"url":"https://example.com/` + strings.Repeat("a", policycheck.MaxLine) + `"}`
	in := strings.Join([]string{
		`{"url":"https://example.com/"}`,
		``,
		`not json`,
		`{"base":"https://example.com/"}`,
		`{"url":"x","context":"sideways"}`,
		`{"url":"/admin","base":"http://10.0.0.1/"}`,
		`{"url":"wss://example.com/","context":"request"}`,
		long,
		`{"url":"x"} {"url":"y"}`,
		"{\"url\":\"https://example.org/\"}\r",
		`{"url":42}`,
		`{"url":"https://example.net/"}`, // no newline at the end
	}, "\n")
	got := check(t, in)
	want := []struct{ url, decision, rule, reason string }{
		{"https://example.com/", "allow", "allow", ""},
		{"", "deny", "input", "stdin line 3: not a JSON object"},
		{"", "deny", "input", `stdin line 4: missing "url"`},
		{"x", "deny", "input", "stdin line 5:"},
		{"/admin", "deny", "", "10.0.0.1"},
		{"wss://example.com/", "allow", "allow", ""},
		{"", "deny", "input", "stdin line 8: line longer than 1048576 bytes"},
		{"", "deny", "input", "stdin line 9: more than one JSON value"},
		{"https://example.org/", "allow", "allow", ""},
		// surf policy check's output, which scripts compare, names the
		// input's Go type as it did in package main
		{"", "deny", "input", "stdin line 11: not a JSON object {\"url\", \"base\", \"context\"}: json: cannot unmarshal number into Go struct field policyInput.url of type string"},
		{"https://example.net/", "allow", "allow", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.URL != w.url || g.Decision != w.decision || (w.rule != "" && g.Rule != w.rule) || !strings.Contains(g.Reason, w.reason) {
			t.Errorf("line %d = %+v, want %+v", i+1, g, w)
		}
	}
}

func TestStdinStops(t *testing.T) {
	p, _ := policy.New(policy.Config{})
	boom := errors.New("boom")
	n := 0
	err := policycheck.Stdin(context.Background(), strings.NewReader("{\"url\":\"a\"}\n{\"url\":\"b\"}\n"), p, "", policy.Navigation,
		func(policycheck.Line) error { n++; return boom })
	if !errors.Is(err, boom) || n != 1 {
		t.Errorf("emit's error: %v after %d lines", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = policycheck.Stdin(ctx, strings.NewReader("{\"url\":\"a\"}\n"), p, "", policy.Navigation,
		func(policycheck.Line) error { t.Error("a line after the end of ctx"); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// FuzzStdin checks that any input is judged without a panic, one line of
// verdict for each line that is not blank.
func FuzzStdin(f *testing.F) {
	for _, s := range []string{`{"url":"https://example.com/"}`, "not json\n\n{\"url\":1}", "{\"url\":\"/a\",\"base\":\"http://[::1]/\",\"context\":\"request\"}\r\n", "\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := check(t, in)
		want := 0
		for _, l := range strings.Split(in, "\n") {
			if len(bytes.TrimSpace([]byte(strings.TrimSuffix(l, "\r")))) > 0 {
				want++
			}
		}
		if len(got) != want {
			t.Errorf("%d verdicts for %d lines", len(got), want)
		}
		for _, l := range got {
			if l.Decision != "allow" && l.Decision != "deny" && l.Decision != "ask" {
				t.Errorf("decision %q", l.Decision)
			}
		}
	})
}
