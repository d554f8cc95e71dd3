package llm

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/internal/tokens"
)

var (
	fenceOpen  = regexp.MustCompile(`<<<[0-9a-f]{8}\b`)
	fenceClose = regexp.MustCompile(`\b[0-9a-f]{8}>>>`)
)

// fenceless replaces the nonces of data fences in s.
func fenceless(s string) string {
	if !strings.Contains(s, "<<<") && !strings.Contains(s, ">>>") {
		return s
	}
	return fenceClose.ReplaceAllString(fenceOpen.ReplaceAllString(s, "<<<nonce"), "nonce>>>")
}

// Fingerprint is the normalised form of a model request that replay
// compares: the model, the offered tool names, the tool choice, the response
// format, and each message's role, text, images (type, size, detail and a
// hash of the bytes), tool calls and tool-call ids. Tool-call ids are
// renumbered call_1, call_2, ... in order of first appearance, so ids
// invented per run do not matter. The random nonces of surf's data fences
// ("<<<1a2b3c4d" ... "1a2b3c4d>>>", which keep page text from posing as
// surf's own words) read "<<<nonce" and "nonce>>>", so fences made per
// request do not matter either. Sampling parameters are left out.
type Fingerprint struct {
	Model          string               `json:"model"`
	Tools          []string             `json:"tools,omitempty"`
	ToolChoice     string               `json:"tool_choice,omitempty"`
	ResponseFormat string               `json:"response_format,omitempty"`
	Messages       []FingerprintMessage `json:"messages,omitempty"`
	// Body is a hash of the request body when it is not a chat-completion
	// request.
	Body string `json:"body,omitempty"`
}

// FingerprintMessage is one message of a Fingerprint.
type FingerprintMessage struct {
	Role       string            `json:"role"`
	Name       string            `json:"name,omitempty"`
	Content    []FingerprintPart `json:"content,omitempty"`
	ToolCalls  []FingerprintCall `json:"tool_calls,omitempty"`
	ToolCallID string            `json:"tool_call_id,omitempty"`
}

// FingerprintPart is a text or an image part of a message.
type FingerprintPart struct {
	Text  string            `json:"text,omitempty"`
	Image *FingerprintImage `json:"image,omitempty"`
}

// FingerprintImage describes an image without its bytes.
type FingerprintImage struct {
	MIME   string `json:"mime,omitempty"`
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
	Detail string `json:"detail,omitempty"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
	URL    string `json:"url,omitempty"` // for images that are not data URLs
}

// FingerprintCall is one tool call of an assistant message.
type FingerprintCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// FingerprintRequest computes the fingerprint of a request body.
func FingerprintRequest(body []byte) Fingerprint {
	var req openai.ChatCompletionRequest
	if err := json.Unmarshal(body, &req); err != nil || (req.Model == "" && len(req.Messages) == 0) {
		sum := sha256.Sum256(body)
		return Fingerprint{Body: "sha256:" + hex.EncodeToString(sum[:])}
	}
	return FingerprintOf(req)
}

// FingerprintOf computes the fingerprint of a request.
func FingerprintOf(req openai.ChatCompletionRequest) Fingerprint {
	fp := Fingerprint{Model: req.Model}
	for _, t := range req.Tools {
		if t.Function != nil {
			fp.Tools = append(fp.Tools, t.Function.Name)
		} else {
			fp.Tools = append(fp.Tools, string(t.Type))
		}
	}
	sort.Strings(fp.Tools)
	switch tc := req.ToolChoice.(type) {
	case nil:
	case string:
		fp.ToolChoice = tc
	default:
		b, _ := json.Marshal(tc)
		fp.ToolChoice = string(b)
	}
	if req.ResponseFormat != nil {
		fp.ResponseFormat = string(req.ResponseFormat.Type)
		if s := req.ResponseFormat.JSONSchema; s != nil {
			fp.ResponseFormat += ":" + s.Name
		}
	}
	ids := map[string]string{}
	id := func(s string) string {
		if s == "" {
			return ""
		}
		if n, ok := ids[s]; ok {
			return n
		}
		n := "call_" + strconv.Itoa(len(ids)+1)
		ids[s] = n
		return n
	}
	for _, m := range req.Messages {
		fm := FingerprintMessage{Role: m.Role, Name: m.Name}
		if m.Content != "" || len(m.MultiContent) == 0 && len(m.ToolCalls) == 0 {
			fm.Content = append(fm.Content, FingerprintPart{Text: fenceless(m.Content)})
		}
		for _, p := range m.MultiContent {
			if p.ImageURL != nil {
				fm.Content = append(fm.Content, FingerprintPart{Image: fingerprintImage(p.ImageURL)})
			} else {
				fm.Content = append(fm.Content, FingerprintPart{Text: fenceless(p.Text)})
			}
		}
		for _, tc := range m.ToolCalls {
			fm.ToolCalls = append(fm.ToolCalls, FingerprintCall{ID: id(tc.ID), Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		fm.ToolCallID = id(m.ToolCallID)
		fp.Messages = append(fp.Messages, fm)
	}
	return fp
}

func fingerprintImage(u *openai.ChatMessageImageURL) *FingerprintImage {
	img := &FingerprintImage{Detail: string(u.Detail)}
	meta, payload, ok := strings.Cut(strings.TrimPrefix(u.URL, "data:"), ",")
	if !strings.HasPrefix(u.URL, "data:") || !ok {
		img.URL = u.URL
		sum := sha256.Sum256([]byte(u.URL))
		img.SHA256 = hex.EncodeToString(sum[:])
		return img
	}
	img.MIME, _, _ = strings.Cut(meta, ";")
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		data = []byte(payload)
	}
	img.Bytes = len(data)
	sum := sha256.Sum256(data)
	img.SHA256 = hex.EncodeToString(sum[:])
	img.Width, img.Height, _ = tokens.DataURLImageSize(u.URL)
	return img
}

// scrub replaces secrets in every string of fp.
func (fp *Fingerprint) scrub(s *scrubber) {
	fp.Model = s.String(fp.Model)
	for i := range fp.Tools {
		fp.Tools[i] = s.String(fp.Tools[i])
	}
	fp.ToolChoice = s.String(fp.ToolChoice)
	for i := range fp.Messages {
		m := &fp.Messages[i]
		m.Name = s.String(m.Name)
		for j := range m.Content {
			m.Content[j].Text = s.String(m.Content[j].Text)
			if img := m.Content[j].Image; img != nil {
				img.URL = s.String(img.URL)
			}
		}
		for j := range m.ToolCalls {
			m.ToolCalls[j].Name = s.String(m.ToolCalls[j].Name)
			m.ToolCalls[j].Arguments = s.String(m.ToolCalls[j].Arguments)
		}
	}
}

// diffFingerprints returns the path of the first field where got differs
// from rec and both values, or ok if they match. Image bytes are compared
// only when strictImages is set.
func diffFingerprints(rec, got Fingerprint, strictImages bool) (field, recorded, actual string, differ bool) {
	d := fpDiff{}
	d.str("body", rec.Body, got.Body)
	d.str("model", rec.Model, got.Model)
	d.str("tools", strings.Join(rec.Tools, ","), strings.Join(got.Tools, ","))
	d.str("tool_choice", rec.ToolChoice, got.ToolChoice)
	d.str("response_format", rec.ResponseFormat, got.ResponseFormat)
	for i := range min(len(rec.Messages), len(got.Messages)) {
		r, g := rec.Messages[i], got.Messages[i]
		p := fmt.Sprintf("messages[%d]", i)
		d.str(p+".role", r.Role, g.Role)
		d.str(p+".name", r.Name, g.Name)
		for j := range min(len(r.Content), len(g.Content)) {
			rp, gp := r.Content[j], g.Content[j]
			q := fmt.Sprintf("%s.content[%d]", p, j)
			d.str(q+".type", partType(rp), partType(gp))
			d.str(q+".text", rp.Text, gp.Text)
			if rp.Image != nil && gp.Image != nil {
				ri, gi := rp.Image, gp.Image
				d.str(q+".image.mime", ri.MIME, gi.MIME)
				d.str(q+".image.size", fmt.Sprintf("%dx%d", ri.Width, ri.Height), fmt.Sprintf("%dx%d", gi.Width, gi.Height))
				d.str(q+".image.detail", ri.Detail, gi.Detail)
				d.str(q+".image.url", ri.URL, gi.URL)
				if strictImages {
					d.str(q+".image.sha256", ri.SHA256, gi.SHA256)
				}
			}
		}
		d.count(p+".content", "parts", len(r.Content), len(g.Content))
		for j := range min(len(r.ToolCalls), len(g.ToolCalls)) {
			rc, gc := r.ToolCalls[j], g.ToolCalls[j]
			q := fmt.Sprintf("%s.tool_calls[%d]", p, j)
			d.str(q+".id", rc.ID, gc.ID)
			d.str(q+".name", rc.Name, gc.Name)
			d.str(q+".arguments", rc.Arguments, gc.Arguments)
		}
		d.count(p+".tool_calls", "calls", len(r.ToolCalls), len(g.ToolCalls))
		d.str(p+".tool_call_id", r.ToolCallID, g.ToolCallID)
	}
	d.count("messages", "messages", len(rec.Messages), len(got.Messages))
	return d.field, d.rec, d.got, d.field != ""
}

func partType(p FingerprintPart) string {
	if p.Image != nil {
		return "image"
	}
	return "text"
}

// fpDiff keeps the first difference found.
type fpDiff struct{ field, rec, got string }

func (d *fpDiff) str(field, rec, got string) {
	if d.field == "" && rec != got {
		d.field = field
		d.rec, d.got = excerpt(rec, got)
	}
}

func (d *fpDiff) count(field, what string, rec, got int) {
	if d.field == "" && rec != got {
		d.field = field
		d.rec, d.got = fmt.Sprintf("%d %s", rec, what), fmt.Sprintf("%d %s", got, what)
	}
}

// excerpt quotes a and b around their first difference, short enough for an
// error message.
func excerpt(a, b string) (string, string) {
	const before, after = 30, 50
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	cut := func(s string) string {
		from, to := max(0, p-before), min(len(s), p+after)
		out := strconv.Quote(s[from:to])
		if from > 0 {
			out = "…" + out
		}
		if to < len(s) {
			out += "…"
		}
		return out
	}
	return cut(a), cut(b)
}
