package encoder

import (
	"fmt"
	"path/filepath"

	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/backends"
)

// GoPipeline opens one of hugot's pipelines over m's graph on hugot's pure-Go backend: conf says
// which pipeline and its options; its model path and graph file are m's. closeFn frees the
// pipeline's session.
func GoPipeline[T backends.Pipeline](m *Model, conf backends.PipelineConfig[T]) (p T, closeFn func() error, err error) {
	session, err := hugot.NewGoSession()
	if err != nil {
		return p, nil, fmt.Errorf("hugot session: %w", err)
	}
	conf.ModelPath, conf.OnnxFilename = m.Dir, filepath.Base(m.OnnxFile)
	if p, err = hugot.NewPipeline(session, conf); err != nil {
		session.Destroy()
		return p, nil, fmt.Errorf("%w: %s: %w", ErrModel, m.Dir, err)
	}
	return p, session.Destroy, nil
}
