package worker_test

import (
	"testing"

	"github.com/surfkit/surf/internal/testkit/browsertest"
)

func TestMain(m *testing.M) { browsertest.Main(m) }
