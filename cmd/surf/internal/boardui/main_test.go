package boardui_test

import (
	"testing"

	"github.com/surfkit/surf/internal/testkit/browsertest"
)

// TestMain: one browser for the binary (the person's browser that drives
// the page is a context in it).
func TestMain(m *testing.M) { browsertest.Main(m) }
