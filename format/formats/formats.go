// Package formats is the registry of changelog formats: it maps the name
// in the pipeline config (source.format) to a decoder.
//
// It is separate from package format because the formats import format
// (for Decoder, Options and Error); a registry there would need init-time
// registration and blank imports. Here every format is imported and listed
// explicitly.
package formats

import (
	"fmt"
	"strings"

	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/canal"
	"github.com/txsink/txsink/format/debezium"
	"github.com/txsink/txsink/format/flinkjson"
	"github.com/txsink/txsink/format/maxwell"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/format/ogg"
)

// registry lists the formats in the order Names reports them.
var registry = []struct {
	name string
	new  func(format.Options) (format.Decoder, error)
}{
	{debezium.Name, func(o format.Options) (format.Decoder, error) { return decoder(debezium.New(o)) }},
	{canal.Name, func(o format.Options) (format.Decoder, error) { return decoder(canal.New(o)) }},
	{maxwell.Name, func(o format.Options) (format.Decoder, error) { return decoder(maxwell.New(o)) }},
	{ogg.Name, func(o format.Options) (format.Decoder, error) { return decoder(ogg.New(o)) }},
	{flinkjson.Name, func(o format.Options) (format.Decoder, error) { return decoder(flinkjson.New(o)) }},
	{native.Name, func(o format.Options) (format.Decoder, error) { return decoder(native.New(o)) }},
}

// decoder converts a format's constructor result to the interface, keeping
// a failed constructor's nil pointer from becoming a non-nil Decoder.
func decoder[D format.Decoder](d D, err error) (format.Decoder, error) {
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Names returns the names of the known formats.
func Names() []string {
	names := make([]string, len(registry))
	for i, r := range registry {
		names[i] = r.name
	}
	return names
}

// New returns a decoder for the format called name, configured by opts.
// An unknown name is an error listing the known ones; an option the format
// does not know is an error naming it.
func New(name string, opts format.Options) (format.Decoder, error) {
	for _, r := range registry {
		if r.name == name {
			return r.new(opts)
		}
	}
	return nil, fmt.Errorf("unknown format %q (known formats: %s)", name, strings.Join(Names(), ", "))
}
