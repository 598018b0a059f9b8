package ask

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, DefaultConfig().Validate())

	off := DefaultConfig()
	off.VectorWeight, off.CarryWeight, off.ReferWeight, off.ContextWeight, off.KGWeight = 0, 0, 0, 0, 0
	off.Experiment.ControlRatio, off.Mode.Threshold, off.Carry.Tau, off.Carry.Cap, off.ContextTerms = 0, 0, 0, 0, 0
	off.FocusOwnInfo = 0
	require.NoError(t, off.Validate(), "0 is a setting: a list off, no fallback, every carried source in")

	bad := DefaultConfig()
	bad.FreshK, bad.ContextWeight, bad.Carry.Decay, bad.Mode.Threshold = 0, -1, 2, 1.5
	bad.FocusOwnInfo = math.NaN()
	err := bad.Validate()
	require.ErrorIs(t, err, ragd.ErrInvalid)
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ie *ragd.InputError
		require.True(t, errors.As(e, &ie), "%v", e)
		fields = append(fields, ie.Field)
	}
	require.Equal(t, []string{"FreshK", "ContextWeight", "FocusOwnInfo", "Carry.Decay", "Mode.Threshold"}, fields,
		"every bad field, in one flat list, nested ones under their parent's name")

	require.Error(t, Config{}.Validate(), "the zero Config is not a usable one")
}
