package sources_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/source"
	_ "github.com/txsink/txsink/source/sources"
)

// fieldPointer is the form of a source config struct's field comment: it
// names the key ("Paths is `source.paths`; see docs/config.md."), which
// the Driver's Keys documents, and may add a short note for Go callers.
var fieldPointer = regexp.MustCompile("^(\\w+) is `source\\.([^`]+)`; see docs/config\\.md\\.(?:\\s+(.*))?$")

// maxGoNote bounds that note, as config's own test does.
const maxGoNote = 160

// TestKeysDocumentedOnce fails when a source's key is documented in two
// places or not at all: each registered source's keys have their
// description in Keys (docs/config.md prints it), every field of its
// config struct tagged with a key only names it, and every key is a
// field's.
func TestKeysDocumentedOnce(t *testing.T) {
	documented := map[string]bool{}
	for _, k := range config.Reference() {
		if name, ok := strings.CutPrefix(k.Key, "source."); ok {
			documented[name] = true
		}
	}
	for _, name := range source.Names() {
		d, err := source.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		kd, ok := d.(source.Keyed)
		if !ok {
			continue
		}
		declared := map[string]bool{}
		for _, k := range kd.Keys() {
			if k.Doc == "" || k.Want == "" || k.Type == 0 {
				t.Errorf("%s: key %s lacks a description, a valid-value text or a type", name, k.Name)
			}
			if declared[k.Name] {
				t.Errorf("%s: key %s is declared twice", name, k.Name)
			}
			declared[k.Name] = true
		}
		if kd.Summary() == "" {
			t.Errorf("%s: no Summary for source.type's documentation", name)
		}
		tagged := taggedFields(t, d)
		for key, doc := range tagged {
			m := fieldPointer.FindStringSubmatch(doc)
			switch {
			case m == nil:
				t.Errorf("%s: the comment of the field of key %s, %q, describes rather than names it; write \"Field is `source.%s`; see docs/config.md.\" and describe it in Keys",
					name, key, doc, key)
			case m[2] != key:
				t.Errorf("%s: the field tagged %s names source.%s", name, key, m[2])
			case len(m[3]) > maxGoNote:
				t.Errorf("%s: the note after source.%s is %d characters, over %d", name, key, len(m[3]), maxGoNote)
			}
			if !documented[key] {
				t.Errorf("%s: its config struct reads source.%s, which no key declares", name, key)
			}
		}
		for key := range declared {
			if _, ok := tagged[key]; !ok {
				t.Errorf("%s: key %s is declared but no config struct field reads it", name, key)
			}
		}
	}
}

// TestSharedKeysAlike: a key several source types declare is one entry of
// the key table, so they must declare it alike.
func TestSharedKeysAlike(t *testing.T) {
	first := map[string]source.Key{}
	owner := map[string]string{}
	for _, name := range source.Names() {
		d, _ := source.Lookup(name)
		kd, ok := d.(source.Keyed)
		if !ok {
			continue
		}
		for _, k := range kd.Keys() {
			f, seen := first[k.Name]
			if !seen {
				first[k.Name], owner[k.Name] = k, name
				continue
			}
			f.Check, k.Check = nil, nil
			if !reflect.DeepEqual(f, k) {
				t.Errorf("key %s: %s declares it as %+v, %s as %+v; declare it alike", k.Name, owner[k.Name], f, name, k)
			}
		}
	}
}

// taggedFields returns, by key, the comments of the fields tagged
// `source:"key"` in the non-test Go files of d's package.
func taggedFields(t *testing.T, d source.Driver) map[string]string {
	t.Helper()
	typ := reflect.TypeOf(d)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	rel, ok := strings.CutPrefix(typ.PkgPath(), "github.com/txsink/txsink/source/")
	if !ok {
		t.Fatalf("driver %v is not in a package under source/", typ)
	}
	dir := filepath.Join("..", filepath.FromSlash(rel))
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			for _, field := range st.Fields.List {
				if field.Tag == nil {
					continue
				}
				tag, _ := strconv.Unquote(field.Tag.Value)
				key, ok := reflect.StructTag(tag).Lookup("source")
				if !ok {
					continue
				}
				out[key] = strings.Join(strings.Fields(field.Doc.Text()), " ")
			}
			return true
		})
	}
	return out
}
