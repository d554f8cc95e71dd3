package snapjson

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/domsnapshot"
)

// fixtures are snapshots Chromium took of two of the project's test pages
// (testdata/sites/perception frames.html and scaled.html), with every
// optional table asked for.
func fixtures(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob("testdata/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

// same checks that Decode gives what jsonv2.Unmarshal gives for b.
func same(t *testing.T, b []byte) {
	t.Helper()
	var want, got domsnapshot.CaptureSnapshotResult
	wantErr := jsonv2.Unmarshal(b, &want)
	gotErr := Decode(b, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("Decode error %v, jsonv2 error %v, for %q", gotErr, wantErr, b)
	}
	if wantErr == nil && !reflect.DeepEqual(want, got) {
		t.Fatalf("Decode gave %+v, jsonv2 %+v, for %q", got, want, b)
	}
	var fast domsnapshot.CaptureSnapshotResult
	if decodeFast(b, &fast) == nil {
		if wantErr != nil {
			t.Fatalf("the fast path took %q, which jsonv2 refuses: %v", b, wantErr)
		}
		if !reflect.DeepEqual(want, fast) {
			t.Fatalf("the fast path gave %+v, jsonv2 %+v, for %q", fast, want, b)
		}
	}
}

func TestDecodeChromiumSnapshots(t *testing.T) {
	for name, b := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			var fast domsnapshot.CaptureSnapshotResult
			if err := decodeFast(b, &fast); err != nil {
				t.Fatalf("a snapshot Chromium sent is not on the fast path: %v", err)
			}
			if len(fast.Documents) < 2 || len(fast.Strings) == 0 || fast.Documents[0].Layout == nil || len(fast.Documents[0].Layout.Styles) == 0 {
				t.Fatalf("the fixture lacks the tables it should have: %d documents, %d strings", len(fast.Documents), len(fast.Strings))
			}
			same(t, b)
		})
	}
}

// TestEveryFieldOnFastPath fills every field of the result's types, so a
// field cdproto adds and the fast path does not know fails here rather than
// sending every snapshot to the slow path.
func TestEveryFieldOnFastPath(t *testing.T) {
	n := 0
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		n++
		switch v.Kind() {
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				fill(v.Field(i))
			}
		case reflect.Slice:
			s := reflect.MakeSlice(v.Type(), 2, 2)
			for i := range 2 {
				fill(s.Index(i))
			}
			v.Set(s)
		case reflect.Int64:
			v.SetInt(int64(n%7) - 1)
		case reflect.Float64:
			v.SetFloat(float64(n) * 1.25)
		case reflect.String:
			v.SetString("s" + string(rune('a'+n%26)))
		default:
			t.Fatalf("a %s field: the test does not know how to fill it", v.Type())
		}
	}
	var full domsnapshot.CaptureSnapshotResult
	fill(reflect.ValueOf(&full).Elem())
	b, err := jsonv2.Marshal(&full)
	if err != nil {
		t.Fatal(err)
	}
	var fast domsnapshot.CaptureSnapshotResult
	if err := decodeFast(b, &fast); err != nil {
		t.Fatalf("a result with every field is not on the fast path: %v\n%s", err, b)
	}
	if !reflect.DeepEqual(full, fast) {
		t.Fatalf("decoded %+v, want %+v", fast, full)
	}
	same(t, b)
}

// odd are inputs the fast path hands to the standard decoder, or refuses
// as it does.
var odd = []string{
	``, `{`, `[]`, `null`, `{}`, ` {"strings":[]} `, `{"strings":["a"]}x`,
	`{"documents":null}`, `{"documents":[null]}`, `{"documents":[{"nodes":null}]}`,
	`{"strings":["caf\u00e9","\"q\"","tab\there","é","日本"]}`,
	"{\"strings\":[\"\xff\"]}", "{\"strings\":[\"a\x01\"]}",
	`{"strings":["a"],"strings":["b"]}`, `{"extra":1,"strings":["a"]}`, `{"Strings":["a"]}`,
	`{"str\u0069ngs":["a"]}`,
	`{"documents":[{"title":-0}]}`, `{"documents":[{"title":1.0}]}`, `{"documents":[{"title":1e2}]}`,
	`{"documents":[{"title":99999999999999999999}]}`, `{"documents":[{"title":123456789012345678}]}`,
	`{"documents":[{"title":01}]}`, `{"documents":[{"title":+1}]}`, `{"documents":[{"title":"1"}]}`,
	`{"documents":[{"contentWidth":-0}]}`, `{"documents":[{"contentWidth":1e400}]}`, `{"documents":[{"contentWidth":12345678901234567890}]}`,
	`{"documents":[{"contentWidth":1.}]}`, `{"documents":[{"contentWidth":.5}]}`, `{"documents":[{"contentWidth":2.5e-3}]}`,
	`{"documents":[{"layout":{"bounds":[[],[1,2.5,3,4],[]],"styles":[[],[1]]}}]}`,
	`{"documents":[{"layout":{"bounds":[[1,2,],[]]}}]}`, `{"documents":[{"layout":{"styles":[[1 2]]}}]}`,
	`{"documents":[{"nodes":{"inputChecked":{"index":[1],"value":[2]}}}]}`,
	`{"documents":[{"nodes":{"textValue":{"index":[1],"value":[2]}}}],"strings":[]}`,
	"{ \"documents\" : [ { \"title\" : 3 , \"nodes\" : { \"parentIndex\" : [ -1 , 0 ] } } ] ,\n\"strings\":[ ] }",
}

func TestDecodeOddInput(t *testing.T) {
	for _, s := range odd {
		same(t, []byte(s))
	}
}

func FuzzDecode(f *testing.F) {
	for _, b := range fixtures(f) {
		f.Add(b)
	}
	for _, s := range odd {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		same(t, b)
	})
}

func BenchmarkDecode(b *testing.B) {
	var all [][]byte
	size := 0
	for _, x := range fixtures(b) {
		all = append(all, x)
		size += len(x)
	}
	b.Run("snapjson", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, x := range all {
				var r domsnapshot.CaptureSnapshotResult
				if err := Decode(x, &r); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("jsonv2", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, x := range all {
				var r domsnapshot.CaptureSnapshotResult
				if err := jsonv2.Unmarshal(x, &r); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
