package webguard

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// WriteJSON answers with v as JSON and status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// mjpegBoundary separates the frames of a live view's stream.
const mjpegBoundary = "surfframe"

// MJPEG is a live view's stream: JPEG frames as
// multipart/x-mixed-replace, which an <img> shows frame by frame.
type MJPEG struct {
	w  http.ResponseWriter
	fl http.Flusher
}

// NewMJPEG makes a stream on w; false when w cannot stream (the caller
// answers with an error).
func NewMJPEG(w http.ResponseWriter) (*MJPEG, bool) {
	fl, ok := w.(http.Flusher)
	if !ok {
		return nil, false
	}
	return &MJPEG{w: w, fl: fl}, true
}

// Start sends the response's header and the first boundary.
func (m *MJPEG) Start() error {
	m.w.Header().Set("Content-Type", "multipart/x-mixed-replace; boundary="+mjpegBoundary)
	m.w.WriteHeader(http.StatusOK)
	if _, err := io.WriteString(m.w, "--"+mjpegBoundary+"\r\n"); err != nil {
		return err
	}
	m.fl.Flush()
	return nil
}

// Frame sends one frame, the boundary at once after it (a browser shows
// a part once the next one starts).
func (m *MJPEG) Frame(jpeg []byte) error {
	if _, err := fmt.Fprintf(m.w, "Content-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n", len(jpeg)); err != nil {
		return err
	}
	if _, err := m.w.Write(jpeg); err != nil {
		return err
	}
	if _, err := io.WriteString(m.w, "\r\n--"+mjpegBoundary+"\r\n"); err != nil {
		return err
	}
	m.fl.Flush()
	return nil
}
