package websurfer

import (
	"bytes"
	"fmt"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
)

// SaveImage writes the observation's screenshot to path: a PNG when the
// path ends in .png, else the JPEG as sent to the model. It makes the
// path's directory if need be.
func (o *Observation) SaveImage(path string) error {
	data := o.Image
	if strings.EqualFold(filepath.Ext(path), ".png") {
		img, err := jpeg.Decode(bytes.NewReader(o.Image))
		if err != nil {
			return fmt.Errorf("converting the screenshot: %w", err)
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			return err
		}
		data = buf.Bytes()
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(path, data, 0o644)
}
