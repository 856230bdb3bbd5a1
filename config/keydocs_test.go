package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// pointerDoc is the form of a field comment that names its key instead
// of describing it: "Name is `name`; see docs/config.md.", "Sink is the
// `sink` section; ...", "FlushInterval is `sink.buffer-flush.interval`
// (or `sink.buffer-flush.interval-ms`); ...". What follows it is a note
// on the Go API (a method to read the field through), not on the key.
var pointerDoc = regexp.MustCompile("^(\\w+) is (?:the )?`([^`]+)`(?: section)?(?: \\(or `([^`]+)`\\))?; see docs/config\\.md\\.(?:\\s+(.*))?$")

// maxGoNote bounds the Go API note after the pointer, so that a key's
// meaning does not creep back into the field comments.
const maxGoNote = 160

// TestKeysDocumentedOnce fails when a key is documented in two places or
// not at all: every key of the table has its description there (and
// docs/config.md prints it), and the struct fields of config.go only name
// their keys, each key named by exactly the field it sets.
func TestKeysDocumentedOnce(t *testing.T) {
	// The keys each field is set by, from the table itself.
	want := map[string][]string{} // "Sink.FlushInterval" -> key paths
	for _, s := range sections() {
		inst := defaultsOf(s)
		for i := range s.keys {
			k := &s.keys[i]
			key := keyPath(s.path, k.name)
			if k.docText() == "" || k.wantText() == "" {
				t.Errorf("%s: no description or no valid-value text in the key table", key)
			}
			if k.only != nil {
				continue // a source's key: its Driver.Keys documents it (see source/sources)
			}
			f := fieldOf(t, inst, k.field(inst))
			want[f] = append(want[f], key)
		}
		for _, child := range s.children {
			want["Config."+childField[child]] = []string{child}
		}
	}

	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "config.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]string{} // key path -> the field naming it
	for _, decl := range file.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok || !slices.Contains([]string{"Config", "Source", "Target", "Table", "Sink", "Schema"}, ts.Name.Name) {
				continue
			}
			for _, field := range ts.Type.(*ast.StructType).Fields.List {
				for _, name := range field.Names {
					id := ts.Name.Name + "." + name.Name
					if id == "Source.Raw" {
						continue // the source type's keys, documented by the source
					}
					doc := strings.Join(strings.Fields(field.Doc.Text()), " ")
					m := pointerDoc.FindStringSubmatch(doc)
					switch {
					case m == nil:
						t.Errorf("%s: its comment %q describes rather than names its key; write \"%s is `key`; see docs/config.md.\" and describe the key in keys.go",
							id, doc, name.Name)
						continue
					case m[1] != name.Name:
						t.Errorf("%s: its comment names %s", id, m[1])
					case len(m[4]) > maxGoNote:
						t.Errorf("%s: the note after the key's name is %d characters, over %d: keep only what a Go caller needs (describe the key in keys.go)",
							id, len(m[4]), maxGoNote)
					}
					got := []string{m[2]}
					if m[3] != "" {
						got = append(got, m[3])
					}
					if !slices.Equal(got, want[id]) {
						t.Errorf("%s: its comment names %q; it is set by %q", id, got, want[id])
					}
					for _, k := range got {
						if other, dup := named[k]; dup {
							t.Errorf("%s is named by %s and %s; document it once", k, other, id)
						}
						named[k] = id
					}
				}
			}
		}
	}
	for id, keys := range want {
		for _, k := range keys {
			if _, ok := named[k]; !ok {
				t.Errorf("%s: no field comment names %s (%s sets it)", k, k, id)
			}
		}
	}
}

// childField is the Config field of each section.
var childField = map[string]string{"source": "Source", "target": "Target", "tables": "Tables", "sink": "Sink", "schema": "Schema"}

// fieldOf returns "Type.Field" of the field of the struct inst points to
// whose address is p.
func fieldOf(t *testing.T, inst, p any) string {
	t.Helper()
	v := reflect.ValueOf(inst).Elem()
	addr := reflect.ValueOf(p).Pointer()
	for i := range v.NumField() {
		if v.Field(i).Addr().Pointer() == addr {
			return v.Type().Name() + "." + v.Type().Field(i).Name
		}
	}
	t.Fatalf("no field of %T at %v", inst, p)
	return ""
}
