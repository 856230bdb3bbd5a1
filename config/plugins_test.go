package config

import (
	"github.com/txsink/txsink/format/formats"
	"github.com/txsink/txsink/source"
	_ "github.com/txsink/txsink/source/sources"
)

// The tests (and docs/config.md, which TestDocsUpToDate writes) see the
// plug-in names cmd/txsink sets.
func init() { SourceTypes, Formats = source.Names, formats.Names }
