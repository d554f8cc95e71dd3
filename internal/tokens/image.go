package tokens

import (
	"encoding/base64"
	"image"
	_ "image/gif" // DecodeConfig for data URLs
	_ "image/jpeg"
	_ "image/png"
	"strings"

	"github.com/sashabaranov/go-openai"
)

// Image token costs from OpenAI's documented formula for GPT-4o-class
// vision models: a low-detail image costs ImageBaseTokens; a high-detail
// image is first scaled to fit in 2048x2048, then scaled down so its shortest
// side is 768 px, and costs ImageBaseTokens plus ImageTileTokens for each
// 512 px tile it covers.
const (
	ImageBaseTokens = 85
	ImageTileTokens = 170

	// ImageMaxTokens is the most a high-detail image can cost (2x4 tiles);
	// it is the estimate for images whose size is unknown.
	ImageMaxTokens = ImageBaseTokens + 8*ImageTileTokens
)

// ImageTokens estimates the prompt tokens of a width x height image sent
// with the given detail. "auto" and "" are counted as "high", the most the
// model may choose. A non-positive size gives ImageMaxTokens (or the
// low-detail cost).
func ImageTokens(width, height int, detail openai.ImageURLDetail) int {
	if detail == openai.ImageURLDetailLow {
		return ImageBaseTokens
	}
	if width <= 0 || height <= 0 {
		return ImageMaxTokens
	}
	w, h := int64(width), int64(height)
	if w > 2048 || h > 2048 {
		if w >= h {
			w, h = 2048, max(1, h*2048/w)
		} else {
			w, h = max(1, w*2048/h), 2048
		}
	}
	if short := min(w, h); short > 768 {
		w, h = w*768/short, h*768/short
	}
	tiles := ((w + 511) / 512) * ((h + 511) / 512)
	return ImageBaseTokens + ImageTileTokens*int(tiles)
}

// ImageURLTokens estimates the prompt tokens of an image_url part. For a
// base64 data URL of a PNG, JPEG or GIF image the size is read from the
// image header; for anything else (a remote URL, an unknown format) the
// estimate is ImageMaxTokens, or the low-detail cost.
func ImageURLTokens(url string, detail openai.ImageURLDetail) int {
	if detail == openai.ImageURLDetailLow {
		return ImageBaseTokens
	}
	w, h, ok := DataURLImageSize(url)
	if !ok {
		return ImageMaxTokens
	}
	return ImageTokens(w, h, detail)
}

// DataURLImageSize returns the pixel size of the image in a base64 data URL
// ("data:image/png;base64,..."), decoding only as much as the image header
// needs.
func DataURLImageSize(url string) (width, height int, ok bool) {
	rest, found := strings.CutPrefix(url, "data:")
	if !found {
		return 0, 0, false
	}
	meta, payload, found := strings.Cut(rest, ",")
	if !found || !strings.HasSuffix(meta, ";base64") {
		return 0, 0, false
	}
	cfg, _, err := image.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(payload)))
	if err != nil {
		return 0, 0, false
	}
	return cfg.Width, cfg.Height, true
}
