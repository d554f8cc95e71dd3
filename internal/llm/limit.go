package llm

import (
	"errors"
	"fmt"
	"io"
)

// DefaultMaxResponseBytes caps the body of a model response when
// Config.MaxResponseBytes is zero: 16 MiB, far above any real completion
// (a 100,000-token reply is some 400 KB), so that a broken or hostile
// server cannot make surf buffer without bound. Tool calls within it are
// capped again, per call, by the tool registry.
const DefaultMaxResponseBytes = 16 << 20

// ErrResponseTooLarge is the error of a model response over the cap.
var ErrResponseTooLarge = errors.New("llm: the model's response is too large")

// tooLarge is the error for a response of n bytes (-1: unknown, still
// being read) over limit.
func tooLarge(n, limit int64) error {
	if n < 0 {
		return fmt.Errorf("%w: more than %d bytes, the limit (Config.MaxResponseBytes); it was not read further", ErrResponseTooLarge, limit)
	}
	return fmt.Errorf("%w: %d bytes, over the limit of %d bytes (Config.MaxResponseBytes); it was not read", ErrResponseTooLarge, n, limit)
}

// limitedBody fails a read once more than limit bytes have come.
type limitedBody struct {
	io.ReadCloser
	limit, read int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.read > b.limit {
		return 0, tooLarge(-1, b.limit)
	}
	if rest := b.limit + 1 - b.read; int64(len(p)) > rest {
		p = p[:rest] // one byte over tells a body over the limit
	}
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if b.read > b.limit {
		return n, tooLarge(-1, b.limit)
	}
	return n, err
}
