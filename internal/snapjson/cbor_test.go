package snapjson

import (
	"os"
	"reflect"
	"testing"

	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/surfkit/surf/internal/cdpcbor"
)

// sameCBOR checks that DecodeCBOR gives what Decode gives for b converted
// to JSON, and that the fast path, when it takes b, does too.
func sameCBOR(t *testing.T, b []byte) {
	t.Helper()
	var want, got domsnapshot.CaptureSnapshotResult
	js, wantErr := cdpcbor.ToJSON(nil, b)
	if wantErr == nil {
		wantErr = Decode(js, &want)
	}
	gotErr := DecodeCBOR(b, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("DecodeCBOR error %v, JSON error %v, for % x", gotErr, wantErr, b)
	}
	if wantErr == nil && !reflect.DeepEqual(want, got) {
		t.Fatalf("DecodeCBOR gave %+v, JSON %+v, for % x", got, want, b)
	}
	var fast domsnapshot.CaptureSnapshotResult
	d := &decoder{b: b, cbor: true}
	if d.result(&fast) == nil && d.i == len(b) {
		if wantErr != nil {
			t.Fatalf("the fast path took % x, which the JSON decoder refuses: %v", b, wantErr)
		}
		if !reflect.DeepEqual(want, fast) {
			t.Fatalf("the fast path gave %+v, JSON %+v, for % x", fast, want, b)
		}
	}
}

// onFastPath fails unless b is on DecodeCBOR's fast path.
func onFastPath(t *testing.T, b []byte) domsnapshot.CaptureSnapshotResult {
	t.Helper()
	var r domsnapshot.CaptureSnapshotResult
	d := &decoder{b: b, cbor: true}
	if err := d.result(&r); err != nil || d.i != len(b) {
		t.Fatalf("not on the fast path: %v (at %d of %d)", err, d.i, len(b))
	}
	return r
}

// A snapshot Chromium wrote on a CBOR pipe (copied from package cdpcbor's
// testdata): 16-bit strings, doubles, every array enveloped.
func chromiumCBOR(t testing.TB) []byte {
	msg, err := os.ReadFile("testdata/snapshot-unicode.cbor")
	if err != nil {
		t.Fatal(err)
	}
	res, ok := cdpcbor.Result(msg)
	if !ok {
		t.Fatal("the fixture is not a reply with a result")
	}
	return res
}

func TestDecodeCBORChromiumSnapshot(t *testing.T) {
	b := chromiumCBOR(t)
	r := onFastPath(t, b)
	if len(r.Documents) == 0 || len(r.Strings) < 50 || len(r.Documents[0].Layout.Bounds) < 100 {
		t.Fatalf("the fixture lacks what it should have: %d documents, %d strings", len(r.Documents), len(r.Strings))
	}
	sameCBOR(t, b)
}

// The JSON fixtures, in CBOR, take the fast path and decode the same.
func TestDecodeCBORFixtures(t *testing.T) {
	for name, js := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			b, err := cdpcbor.FromJSON(nil, js)
			if err != nil {
				t.Fatal(err)
			}
			onFastPath(t, b)
			sameCBOR(t, b)
		})
	}
}

func TestDecodeCBOROddInput(t *testing.T) {
	for _, s := range odd {
		if b, err := cdpcbor.FromJSON(nil, []byte(s)); err == nil {
			sameCBOR(t, b)
		}
	}
	for _, b := range [][]byte{nil, {0xd8}, {0xd8, 0x18, 0x5a, 0, 0, 0, 1, 0xbf}, {0xf6}, {0xa0}} {
		sameCBOR(t, b)
	}
}

func FuzzDecodeCBOR(f *testing.F) {
	f.Add(chromiumCBOR(f))
	for _, js := range fixtures(f) {
		if b, err := cdpcbor.FromJSON(nil, js); err == nil {
			f.Add(b)
		}
	}
	for _, s := range odd {
		if b, err := cdpcbor.FromJSON(nil, []byte(s)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameCBOR(t, b)
	})
}

func BenchmarkDecodeCBOR(b *testing.B) {
	var all [][]byte
	size := 0
	for _, js := range fixtures(b) {
		c, err := cdpcbor.FromJSON(nil, js)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, c)
		size += len(c)
	}
	c := chromiumCBOR(b)
	all = append(all, c)
	size += len(c)
	b.Run("cbor", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, x := range all {
				var r domsnapshot.CaptureSnapshotResult
				if err := DecodeCBOR(x, &r); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("to JSON, then snapjson", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, x := range all {
				js, err := cdpcbor.ToJSON(nil, x)
				if err != nil {
					b.Fatal(err)
				}
				var r domsnapshot.CaptureSnapshotResult
				if err := Decode(js, &r); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
