package sqlite

import (
	"context"

	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink"
)

// sinkDriver opens sqlite:// targets, a relative path relative to the
// config file's folder (see Path); read-only, it neither creates the file
// nor changes its journal mode (see OpenReadOnly).
type sinkDriver struct{}

func (sinkDriver) Open(ctx context.Context, url string, env sink.Env) (sink.Sink, error) {
	p, err := Path(url, env.BaseDir)
	if err != nil {
		return nil, err
	}
	if env.ReadOnly {
		return sqlsink.AsSink(OpenReadOnly(ctx, p))
	}
	return sqlsink.AsSink(Open(ctx, p))
}

func init() { sink.Register("sqlite", sinkDriver{}) }
