package ragd_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

func TestPassageText(t *testing.T) {
	t.Parallel()
	require.Equal(t, "Flood Safety\nBefore > Kits\nStore water.", ragd.PassageText("Flood Safety", "Before > Kits", "Store water."))
	require.Equal(t, "Flood Safety\nStore water.", ragd.PassageText("Flood Safety", "", "Store water."), "no heading, no empty line")
	require.Equal(t, "Store water.", ragd.PassageText("", "", "Store water."))
}
