package cdpcbor

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// same reports whether two JSON texts hold the same value.
func same(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%v in %.300s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%v in %.300s", err, b)
	}
	return reflect.DeepEqual(va, vb)
}

func roundTrip(t *testing.T, js string) []byte {
	t.Helper()
	c, err := FromJSON(nil, []byte(js))
	if err != nil {
		t.Fatalf("FromJSON(%s): %v", js, err)
	}
	if n, err := MessageLen(c); err != nil || n != len(c) {
		t.Fatalf("MessageLen = %d, %v; want %d", n, err, len(c))
	}
	back, err := ToJSON(nil, c)
	if err != nil {
		t.Fatalf("ToJSON(FromJSON(%s)): %v", js, err)
	}
	return back
}

func TestRoundTrip(t *testing.T) {
	for _, js := range []string{
		`{}`,
		`{"id":1,"method":"Browser.getVersion"}`,
		`{"id":2147483647,"method":"DOM.getBoxModel","sessionId":"ABC","params":{"backendNodeId":-2147483648}}`,
		`{"a":[],"b":{},"c":[[[]]],"d":[1,-1,0,24,255,256,65535,65536,4294967296,-4294967297,1.5,-0.25,1e21,1e-7,123456789012,9007199254740991]}`,
		`{"s":"quote \" backslash \\ slash \/ tab \t nl \n cr \r bs \b ff \f nul \u0000 us \u001f del \u007f"}`,
		`{"s":"é ü 日本語 😀 \u00e9\ud83d\ude00 \u2028 עברית"}`,
		`{"t":true,"f":false,"n":null,"x":[true,false,null]}`,
		"  {\n\t\"ws\" :\r [ 1 , 2 ] }  ",
		`{"big":` + strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200) + `}`,
		`{"long":"` + strings.Repeat("x", 70000) + `"}`,
	} {
		if back := roundTrip(t, js); !same(t, []byte(js), back) {
			t.Errorf("round trip of %.200s gave %.200s", js, back)
		}
	}
}

func TestLoneSurrogateSurvives(t *testing.T) {
	back := roundTrip(t, `{"s":"a\ud800b\udfff"}`)
	if !bytes.Contains(back, []byte(`a\ud800b\udfff`)) {
		t.Errorf("lone surrogates became %s", back)
	}
}

func TestIntegersStayIntegers(t *testing.T) {
	c, err := FromJSON(nil, []byte(`{"a":5,"b":-7,"c":2147483648,"d":1.5}`))
	if err != nil {
		t.Fatal(err)
	}
	back, err := ToJSON(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":5,"b":-7,"c":2147483648,"d":1.5}`; string(back) != want {
		t.Errorf("got %s, want %s", back, want)
	}
	// 5 is one byte, 2147483648 a double.
	if !bytes.Contains(c, []byte{0x61, 'a', 0x05}) || !bytes.Contains(c, []byte{0x61, 'c', 0xfb}) {
		t.Errorf("integers encoded as % x", c)
	}
}

// Chromium's own encoding of what these tests see: 16-bit strings,
// binary data, definite lengths (which Chromium does not write but CBOR
// allows), floats.
func TestToJSONChromiumForms(t *testing.T) {
	env := func(body ...byte) []byte {
		return append([]byte{0xd8, 0x18, 0x5a, 0, 0, 0, byte(len(body))}, body...)
	}
	utf16 := []byte{0x44, 'h', 0, 'i', 0} // "hi" as a byte string
	pair := []byte{0x44, 0x3d, 0xd8, 0x00, 0xde}
	lone := []byte{0x42, 0x00, 0xd8}
	bin := []byte{0xd6, 0x43, 1, 2, 3}
	for _, c := range []struct {
		cbor []byte
		want string
	}{
		{env(append(append([]byte{0xbf, 0x61, 'a'}, utf16...), 0xff)...), `{"a":"hi"}`},
		{env(append(append([]byte{0xbf, 0x61, 'a'}, pair...), 0xff)...), `{"a":"😀"}`},
		{env(append(append([]byte{0xbf, 0x61, 'a'}, lone...), 0xff)...), `{"a":"\ud800"}`},
		{env(append(append([]byte{0xbf, 0x61, 'a'}, bin...), 0xff)...), `{"a":"AQID"}`},
		{env(0xa2, 0x61, 'a', 0x82, 0x01, 0x20, 0x61, 'b', 0xf6), `{"a":[1,-1],"b":null}`},
		{env(0xbf, 0x61, 'f', 0xfa, 0x3f, 0xc0, 0, 0, 0x61, 'g', 0xfb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0, 0xff), `{"f":1.5,"g":null}`},
		{env(0xbf, 0x61, 's', 0x63, 'a', 0xff, 'b', 0xff), "{\"s\":\"a\ufffdb\"}"},
		{env(0xbf, 0x61, 'n', 0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), `{"n":-18446744073709551616}`},
	} {
		got, err := ToJSON(nil, c.cbor)
		if err != nil {
			t.Errorf("ToJSON(% x): %v", c.cbor, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("ToJSON(% x) = %s, want %s", c.cbor, got, c.want)
		}
	}
}

func TestBadInput(t *testing.T) {
	good, err := FromJSON(nil, []byte(`{"id":1,"result":{"a":[1,2,"x"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(good) {
		if _, err := ToJSON(nil, good[:n]); err == nil {
			t.Errorf("ToJSON of the first %d of %d bytes: no error", n, len(good))
		}
	}
	deep := []byte{}
	for range maxDepth + 2 {
		deep = append(deep, 0x81)
	}
	deep = append(deep, 0x01)
	if _, err := ToJSON(nil, deep); err == nil {
		t.Error("ToJSON of a too-deep array: no error")
	}
	for _, js := range []string{``, `[]`, `"x"`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":tru}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":-}`, `{"a":1}x`, "{\"a\":\"\x01\"}",
		`{"a":` + strings.Repeat(`[`, maxDepth+2) + strings.Repeat(`]`, maxDepth+2) + `}`} {
		if _, err := FromJSON(nil, []byte(js)); err == nil {
			t.Errorf("FromJSON(%.40q): no error", js)
		}
	}
	if _, err := MessageLen([]byte{0x7b, 0x22}); err == nil {
		t.Error("MessageLen of JSON: no error")
	}
	if n, err := MessageLen(good[:5]); n != 0 || err != nil {
		t.Errorf("MessageLen of a partial header = %d, %v", n, err)
	}
}

func TestID(t *testing.T) {
	for js, want := range map[string]int64{
		`{"id":7,"result":{}}`:                 7,
		`{"id":1073741825,"result":{}}`:        1073741825,
		`{"method":"X","params":{"id":3}}`:     -1,
		`{"ident":1}`:                          -1,
		`{"id":"7"}`:                           -1,
		`{"id":2,"result":{},"sessionId":"S"}`: 2,
	} {
		c, err := FromJSON(nil, []byte(js))
		if err != nil {
			t.Fatal(err)
		}
		id, ok := ID(c)
		if !ok {
			id = -1
		}
		if id != want {
			t.Errorf("ID(%s) = %d, want %d", js, id, want)
		}
	}
}

func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"id":1,"method":"A","params":{"x":[1,2.5,"é\ud83d\ude00",null,true]}}`, `{"s":"a\ud800"}`, `{"n":-2147483649}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		c, err := FromJSON(nil, js)
		var v any
		valid := json.Unmarshal(js, &v) == nil
		if _, isObj := v.(map[string]any); !isObj {
			valid = false
		}
		if err != nil {
			if valid && !strings.Contains(err.Error(), "too deep") && !bytes.ContainsAny(js, "\x00") {
				t.Fatalf("FromJSON(%q) of valid JSON: %v", js, err)
			}
			return
		}
		back, err := ToJSON(nil, c)
		if err != nil {
			t.Fatalf("ToJSON(FromJSON(%q)): %v", js, err)
		}
		if valid && !same(t, js, back) {
			t.Fatalf("round trip of %q gave %q", js, back)
		}
	})
}

func FuzzToJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"id":1,"result":{"a":[1,"é",{"b":null}]}}`} {
		c, _ := FromJSON(nil, []byte(s))
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		MessageLen(b)
		ID(b)
		if r, ok := Result(b); ok && len(r) > len(b) {
			t.Fatalf("Result is longer than the message")
		}
		js, err := ToJSON(nil, b)
		if err != nil {
			return
		}
		if !json.Valid(js) {
			t.Fatalf("ToJSON(% x) = %q: not JSON", b, js)
		}
	})
}

// TestChromiumMessages converts messages Chromium wrote on a CBOR pipe and
// compares them with what it wrote for the same commands on a JSON pipe
// (testdata/README.md). Values that differ from one browser run to the
// next are left out.
func TestChromiumMessages(t *testing.T) {
	names, err := filepath.Glob("testdata/*.cbor")
	if err != nil || len(names) < 9 {
		t.Fatalf("fixtures: %v, %v", names, err)
	}
	varies := map[string]bool{"sessionId": true, "targetId": true, "frameId": true, "loaderId": true, "timestamp": true,
		"documentURL": true, "data": true, "browserContextId": true, "openerFrameId": true}
	var clean func(v any) any
	clean = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if varies[k] {
					delete(v, k)
				} else {
					v[k] = clean(x)
				}
			}
		case []any:
			for i, x := range v {
				v[i] = clean(x)
			}
		}
		return v
	}
	for _, name := range names {
		c, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(strings.TrimSuffix(name, ".cbor") + ".json")
		if err != nil {
			t.Fatal(err)
		}
		if n, err := MessageLen(c); err != nil || n != len(c) {
			t.Errorf("%s: MessageLen = %d, %v; want %d", name, n, err, len(c))
		}
		got, err := ToJSON(nil, c)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(name, "snapshot") { // its string table holds the frame id too
			for _, m := range []any{g, w} {
				s := m.(map[string]any)["result"].(map[string]any)["strings"].([]any)
				s[3] = ""
			}
		}
		if g, w = clean(g), clean(w); !reflect.DeepEqual(g, w) {
			gj, _ := json.Marshal(g)
			wj, _ := json.Marshal(w)
			t.Errorf("%s: converted\n%.2000s\nChromium's JSON\n%.2000s", name, gj, wj)
		}
		// Back to CBOR and again to JSON: the same.
		c2, err := FromJSON(nil, got)
		if err != nil {
			t.Fatalf("%s: FromJSON: %v", name, err)
		}
		again, err := ToJSON(nil, c2)
		if err != nil || !same(t, got, again) {
			t.Errorf("%s: a second round trip changed it (%v)", name, err)
		}
	}
}

func TestResult(t *testing.T) {
	for js, want := range map[string]string{
		`{"id":1,"result":{"a":[1,"x",{"b":null}],"c":1.5},"sessionId":"S"}`: `{"a":[1,"x",{"b":null}],"c":1.5}`,
		`{"id":1,"result":{}}`:                            `{}`,
		`{"id":1,"sessionId":"S","result":{"s":"é"}}`:     `{"s":"é"}`,
		`{"id":1,"error":{"code":-32000,"message":"no"}}`: ``,
		`{"method":"X","params":{"result":{}}}`:           ``,
	} {
		c, err := FromJSON(nil, []byte(js))
		if err != nil {
			t.Fatal(err)
		}
		r, ok := Result(c)
		if !ok {
			if want != "" {
				t.Errorf("Result(%s): none", js)
			}
			continue
		}
		got, err := ToJSON(nil, r)
		if err != nil || string(got) != want {
			t.Errorf("Result(%s) = %s, %v; want %s", js, got, err, want)
		}
	}
	snap, err := os.ReadFile("testdata/snapshot-unicode.cbor")
	if err != nil {
		t.Fatal(err)
	}
	r, ok := Result(snap)
	if !ok || len(r) < len(snap)-100 {
		t.Fatalf("Result of the snapshot: %d of %d bytes, %v", len(r), len(snap), ok)
	}
	for n := range len(snap) {
		if n%97 == 0 {
			Result(snap[:n]) // must not panic
		}
	}
}
