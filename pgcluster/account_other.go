//go:build !unix

package pgcluster

import (
	"errors"
	"runtime"
	"syscall"
)

// account is the OS user that PostgreSQL's programs run as. Only Unix is supported: the
// cluster is reached over a Unix socket and run with a switched user when ragd is root.
type account struct{ home string }

func serverAccount(string) (*account, error) {
	return nil, errors.New("pgcluster: a private PostgreSQL cluster is not supported on " + runtime.GOOS +
		"; use an external database (--database-url)")
}

func (*account) String() string                    { return "" }
func (*account) sysProcAttr() *syscall.SysProcAttr { return nil }
func (*account) checkTraversable(string) error     { return nil }
func (*account) chown(string) error                { return nil }
func (*account) checkOwns(string) error            { return nil }
