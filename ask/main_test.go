package ask

import (
	"os"
	"testing"

	"github.com/ragd/ragd/internal/dbtest"
)

// TestMain drops the test databases when the package's tests are done (see dbtest.Main).
func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }
