package liveui_test

import (
	"testing"

	"github.com/surfkit/surf/internal/testkit/browsertest"
)

// TestMain: one browser for the binary (the agent's sessions and the
// person's browser that drives the UI are contexts in it).
func TestMain(m *testing.M) { browsertest.Main(m) }
