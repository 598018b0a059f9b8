package store

import (
	"fmt"
	"strings"
)

// filter is a query's WHERE clause built from the conditions a request sets, each with its one
// parameter numbered in the order added ($1, $2, ...): the filters of the audit exports and of
// the experiment report.
type filter struct {
	conds []string
	args  []any
}

// add adds cond, whose %d is v's parameter number.
func (f *filter) add(cond string, v any) {
	f.args = append(f.args, v)
	f.conds = append(f.conds, fmt.Sprintf(cond, len(f.args)))
}

// where is " WHERE " and the conditions joined by AND, or "" when there are none.
func (f *filter) where() string {
	if len(f.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(f.conds, " AND ")
}
