package report

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReport feeds arbitrary bytes to the journal reader and the page
// writer: nothing panics or fails, and whatever the journal holds, the page
// keeps its own single script and style and no markup of the journal's.
func FuzzReport(f *testing.F) {
	for _, s := range []string{
		"",
		`{"event":"run_started","task":"<script>alert(1)</script>","config":{"a":"<b>"}}` + "\n",
		`{"event":"observed","step":1,"title":"</title><script>x</script>","url":"javascript:alert(1)","image":"../../etc/passwd"}` + "\n",
		`{"event":"reasoned","step":2,"calls":[{"tool":"<img src=x onerror=alert(1)>","args":{"a":"</pre>"},"reasoning":"<style>*{}</style>"}],"usage":{"prompt":1,"completion":2,"total":3}}` + "\n",
		`{"event":"gated","step":2,"verdict":"<deny>","rule":"<!--","reason":"]]><![CDATA[","approved":false}` + "\n",
		`{"event":"acted","step":3,"error":"<iframe src=//x>","result":"a\nb\nc\nd\ne\nf","duration":12.5}` + "\n" + `{"event":"ended","end_reason":"answ`,
		`{"event":"mystery","step":-4,"message":"<link rel=stylesheet href=//x>"}` + "\n" + `{"event":"ended","answer":"<svg onload=alert(1)>"}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		j := parse(data)
		j.Dir = dir
		var buf bytes.Buffer
		if _, err := Write(&buf, j, Options{MaxText: 200}); err != nil {
			t.Fatalf("Write: %v", err)
		}
		page := strings.ToLower(buf.String())
		for tag, want := range map[string]int{"<script": 1, "</script": 1, "<style": 1, "<img": 1, "<iframe": 0, "<link": 0, "<svg": 0, "<!--": 0, "<meta": 4} {
			if n := strings.Count(page, tag); n != want {
				t.Errorf("the page has %d %q, want %d", n, tag, want)
			}
		}
	})
}
