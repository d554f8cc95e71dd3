package websurfer

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
)

// maskSecret has characters each encoding writes its own way.
const maskSecret = `s3 cr*t~&+ü`

// secretFieldPage is a text field at a fixed place, and a paragraph that
// echoes what is typed into it.
const secretFieldPage = `<!doctype html><title>Field</title>
<style>body{margin:0;background:#fff;font-family:sans-serif}
#f{position:absolute;left:40px;top:60px;width:420px;height:44px;font-size:28px;border:1px solid #888;color:#000}
#echo{position:absolute;left:40px;top:200px;font-size:28px;margin:0;color:#000}</style>
<input id=f type=text aria-label="Secret field" oninput="document.getElementById('echo').textContent='You typed: '+this.value">
<p id=echo>nothing typed</p>
<input id=g type=text aria-label="Reformatting field" style="position:absolute;left:40px;top:300px;width:420px;height:44px;font-size:28px" oninput="this.value=this.value.toUpperCase()">`

func secretFieldSurfer(t *testing.T, kind ImageKind) (*Surfer, string) {
	t.Helper()
	sites := browsertest.ServeSites(t)
	sites.Handle("/secret-field", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, secretFieldPage)
	})
	hostA := strings.TrimPrefix(sites.A, "http://")
	pol := policy.MustNew(policy.Config{
		Allow: []policy.HostRule{mustHostRule(t, hostA)},
		Secrets: []policy.Secret{
			{Name: "PW", Value: maskSecret, Hosts: []policy.HostRule{mustHostRule(t, "127.0.0.1")}},
			{Name: "OTHER", Value: "WWWWWWWWWWW", Hosts: []policy.HostRule{mustHostRule(t, "127.0.0.1")}},
		},
	})
	sess := browsertest.Session(t, sandbox.SessionConfig{Policy: pol})
	s := newSurfer(t, Config{Session: sess, Image: kind})
	return s, sites.A + "/secret-field"
}

// typeInto types text into the field named name and returns the
// observation after it.
func typeInto(t *testing.T, s *Surfer, name, text string) *Observation {
	t.Helper()
	obs := observe(t, s)
	for _, e := range obs.Elements {
		if e.Name == name {
			res, err := s.InputText(context.Background(), e.ID, text, false, true)
			if err != nil {
				t.Fatalf("typing %q: %v", text, err)
			}
			return res.Observation
		}
	}
	t.Fatalf("no element %q in\n%s", name, obs.Text())
	return nil
}

// region returns the image pixels of a viewport box (CSS pixels), inset.
func region(t *testing.T, data []byte, viewportW int, b Box, inset float64) (image.Image, image.Rectangle) {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	scale := float64(img.Bounds().Dx()) / float64(viewportW)
	r := image.Rect(int(math.Ceil((b.X+inset)*scale)), int(math.Ceil((b.Y+inset)*scale)),
		int((b.X+b.W-inset)*scale), int((b.Y+b.H-inset)*scale))
	return img, r
}

// spread is browsertest.LumaSpread: small for a mask, large for text.
func spread(img image.Image, r image.Rectangle) float64 { return browsertest.LumaSpread(img, r) }

// regionDiff is the mean absolute luma difference of two images in r.
func regionDiff(a, b image.Image, r image.Rectangle) float64 {
	var sum float64
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ar, ag, ab, _ := a.At(x, y).RGBA()
			br, bg, bb, _ := b.At(x, y).RGBA()
			la := (0.299*float64(ar) + 0.587*float64(ag) + 0.114*float64(ab)) / 257
			lb := (0.299*float64(br) + 0.587*float64(bg) + 0.114*float64(bb)) / 257
			sum += math.Abs(la - lb)
		}
	}
	return sum / float64(r.Dx()*r.Dy())
}

func elementBox(t *testing.T, obs *Observation, name string) Box {
	t.Helper()
	for _, e := range obs.Elements {
		if e.Name == name {
			return e.Box
		}
	}
	t.Fatalf("no element %q", name)
	return Box{}
}

// uniformMax is the spread a masked box stays within (JPEG noise).
const uniformMax = 24

// TestSecretMaskedInPlainImages: a secret typed into a visible field, and
// the same value echoed by the page, are painted over in the plain image
// and in Screenshot; plain text typed the same way is not.
func TestSecretMaskedInPlainImages(t *testing.T) {
	s, u := secretFieldSurfer(t, ImagePlain)
	ctx := context.Background()
	if _, err := s.VisitURL(ctx, u); err != nil {
		t.Fatal(err)
	}
	echo := Box{X: 40, Y: 200, W: 200, H: 30} // inside "You typed: " and the value, at 28px

	// The control: plain text shows, so the check below can fail.
	obs := typeInto(t, s, "Secret field", "WWWW MMMM")
	field := elementBox(t, obs, "Secret field")
	if img, r := region(t, obs.Image, obs.Viewport.Width, field, 4); spread(img, r) < 3*uniformMax {
		t.Fatalf("plain text in the field spreads only %.0f: the check cannot tell text from a mask", spread(img, r))
	}

	obs = typeInto(t, s, "Secret field", "<secret:PW>")
	if strings.Contains(obs.Text(), "cr*t") {
		t.Fatalf("the text shows the secret:\n%s", obs.Text())
	}
	// A field that reformats what is typed no longer holds the value, but
	// surf typed a secret into it.
	obs = typeInto(t, s, "Reformatting field", "<secret:PW>")
	if v, err := s.Page().Evaluate(`() => document.getElementById('g').value`); err != nil || v != strings.ToUpper(maskSecret) {
		t.Fatalf("the reformatting field holds %q, %v", v, err)
	}
	reformatting := elementBox(t, obs, "Reformatting field")
	shot, err := s.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for what, data := range map[string][]byte{"the observation's image": obs.Image, "Screenshot": shot} {
		for where, b := range map[string]Box{"the field": field, "the echo": echo, "the reformatting field": reformatting} {
			img, r := region(t, data, obs.Viewport.Width, b, 3)
			if sp := spread(img, r); sp > uniformMax {
				t.Errorf("%s: %s is not masked (spread %.0f)", what, where, sp)
			}
		}
	}
}

// TestSecretMaskedInMarkImage: in the set-of-mark image, a field holding
// one secret looks exactly like the field holding another (both masked,
// marks drawn alike), while two plain texts look different.
func TestSecretMaskedInMarkImage(t *testing.T) {
	s, u := secretFieldSurfer(t, ImageMarks)
	if _, err := s.VisitURL(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	images := map[string]image.Image{}
	var r image.Rectangle
	for _, text := range []string{"WWWWWWWWWWW", "iiiiiiiiiii", "<secret:PW>", "<secret:OTHER>"} {
		obs := typeInto(t, s, "Secret field", text)
		images[text], r = region(t, obs.Image, obs.Viewport.Width, elementBox(t, obs, "Secret field"), 0)
	}
	if d := regionDiff(images["WWWWWWWWWWW"], images["iiiiiiiiiii"], r); d < 5 {
		t.Fatalf("two plain texts differ by only %.1f in the field: the check cannot tell", d)
	}
	if d := regionDiff(images["<secret:PW>"], images["<secret:OTHER>"], r); d > 1 {
		t.Errorf("two secrets differ by %.1f in the field: the value shows", d)
	}
}

// TestSecretMaskedInScreencast: the live view's frames mask a secret typed
// into a field as the model's image does, and leave plain text alone.
func TestSecretMaskedInScreencast(t *testing.T) {
	s, u := secretFieldSurfer(t, ImagePlain)
	ctx := context.Background()
	if _, err := s.VisitURL(ctx, u); err != nil {
		t.Fatal(err)
	}
	typeInto(t, s, "Secret field", "<secret:PW>")
	obs := typeInto(t, s, "Reformatting field", "WWWW MMMM")
	field, plain := elementBox(t, obs, "Secret field"), elementBox(t, obs, "Reformatting field")

	frames, stop := watch(t, s, ScreencastOptions{Quality: 80})
	defer stop()
	f := nextFrame(t, frames, "after typing", func(f Frame) bool { return f.ViewportWidth > 0 })
	vw := int(f.ViewportWidth)
	// The control: the plain text shows, so the check below can fail.
	if img, r := region(t, f.JPEG, vw, plain, 4); spread(img, r) < 3*uniformMax {
		t.Fatalf("plain text in a frame spreads only %.0f: the check cannot tell text from a mask", spread(img, r))
	}
	if img, r := region(t, f.JPEG, vw, field, 3); spread(img, r) > uniformMax {
		t.Errorf("the frame shows the field holding the secret (spread %.0f): it is not masked", spread(img, r))
	}
}
