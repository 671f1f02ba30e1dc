package http

import (
	"os"
	"testing"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// TestMain removes the fakes' build dir when the tests end (testkit.Main).
func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }
