package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/txsink/txsink/source"
)

// This file joins the keys the source types declare (source.Keyed) to the
// key table: a source's keys are parsed, checked and documented as the
// common keys are, and their values are kept in Source.Raw by name.

// valueTypes maps a source key's type to the table's.
var valueTypes = map[source.KeyType]valueType{
	source.KeyString:      typeString,
	source.KeyBool:        typeBool,
	source.KeyInt:         typeInt,
	source.KeySize:        typeSize,
	source.KeyDuration:    typeDuration,
	source.KeyStrings:     typeStrings,
	source.KeyStringLists: typeStringLists,
}

// keyed returns the keys source type name declares, and its driver; nil
// keys when it declares none or is not registered.
func keyed(name string) (source.Driver, []source.Key) {
	if SourceDriver == nil {
		return nil, nil
	}
	d, err := SourceDriver(name)
	if err != nil {
		return nil, nil
	}
	if kd, ok := d.(source.Keyed); ok {
		return d, kd.Keys()
	}
	return d, nil
}

// sourceSectionFor returns the source section with the keys of every
// registered source type after the common ones, type by type in name
// order. A key several types declare (they must declare it alike; the
// source/sources tests check that) is one entry belonging to them all.
// Every key is known whatever source.type says, so that a key of another
// type is refused by name rather than as unknown.
func fullSourceSection() *sectionDef {
	sec := sourceSection
	sec.keys = slices.Clone(sourceSection.keys)
	common := len(sec.keys)
	for _, t := range known(SourceTypes) {
		_, keys := keyed(t)
		for _, k := range keys {
			if i := slices.IndexFunc(sec.keys, func(d keyDef) bool { return d.name == k.Name }); i >= 0 {
				if i >= common && !slices.Contains(sec.keys[i].only, t) {
					sec.keys[i].only = append(slices.Clone(sec.keys[i].only), t)
				}
				continue
			}
			sec.keys = append(sec.keys, sourceKeyDef(t, k))
		}
	}
	return &sec
}

// sourceKeyDef is the table's entry for key k of source type t.
func sourceKeyDef(t string, k source.Key) keyDef {
	typ, ok := valueTypes[k.Type]
	if !ok {
		panic(fmt.Sprintf("config: source type %s declares key %s of unknown type %d", t, k.Name, k.Type))
	}
	def := k.Default
	if def == nil {
		def = k.Type.Zero()
	}
	d := keyDef{
		name: k.Name, typ: typ, unit: k.Unit, required: k.Required, only: []string{t},
		path: k.Path, env: k.Env, want: k.Want, defaultDoc: k.DefaultDoc, doc: k.Doc,
		field: func(s any) any { return rawSlot(s.(*Source), k.Name, def) },
		store: func(s any, p any) { s.(*Source).Set(k.Name, reflect.ValueOf(p).Elem().Interface()) },
		value: reflect.TypeOf(def),
	}
	if k.Check != nil {
		d.check = func(p any) string { return k.Check(reflect.ValueOf(p).Elem().Interface()) }
	}
	return d
}

// rawSlot returns a pointer to a copy of s.Raw[name], or of def when the
// key is absent or holds a value of another type (which validation
// reports).
func rawSlot(s *Source, name string, def any) any {
	v, ok := s.Raw[name]
	if !ok || v == nil || reflect.TypeOf(v) != reflect.TypeOf(def) {
		v = def
	}
	p := reflect.New(reflect.TypeOf(def))
	p.Elem().Set(reflect.ValueOf(v))
	return p.Interface()
}

// sourceTypeDoc documents source.type from the registered types.
func sourceTypeDoc() string {
	var kinds, marks []string
	for _, t := range known(SourceTypes) {
		d, keys := keyed(t)
		kd, ok := d.(source.Keyed)
		if !ok {
			kinds = append(kinds, "`"+t+"`")
			continue
		}
		kinds = append(kinds, "`"+t+"` ("+kd.Summary()+")")
		if len(keys) > 0 {
			marks = append(marks, "*"+t+" only*")
		}
	}
	doc := "The kind of source: " + joinList(kinds, "or") + "."
	if len(marks) > 0 {
		doc += " The keys marked " + joinList(marks, "or") + " belong to one kind."
	}
	return doc
}

// joinList joins l as "a, b or c" (conj "or").
func joinList(l []string, conj string) string {
	if len(l) < 2 {
		return strings.Join(l, "")
	}
	return strings.Join(l[:len(l)-1], ", ") + " " + conj + " " + l[len(l)-1]
}

// Set sets the source type's key to v (a value of the key's Go type, see
// source.KeyType) in Raw, for a Config built in Go: cfg.Source.Set("paths",
// []string{"a.jsonl"}). Raw is copied first, so a Config copied by value
// keeps its own settings.
func (s *Source) Set(key string, v any) {
	m := make(source.Settings, len(s.Raw)+1)
	maps.Copy(m, s.Raw)
	m[key] = v
	s.Raw = m
}

// Settings returns the source section by key name, as the source's Driver
// takes it (see package source): the common keys, and every key of the
// chosen type's, its default filled in when absent. Keys in Raw that no
// type declares are handed on as they are.
func (s *Source) Settings() source.Settings {
	out := make(source.Settings, len(sourceSection.keys)+len(s.Raw))
	for k, v := range s.Raw {
		out[k] = v
	}
	for _, k := range fullSourceSection().keys {
		if k.aliasOf != "" || (k.only != nil && !slices.Contains(k.only, s.Type)) {
			continue
		}
		out[k.name] = reflect.ValueOf(k.field(s)).Elem().Interface()
	}
	return out
}
