package source

import (
	"fmt"
	"reflect"
)

// Decode fills the fields of the struct into points to from settings:
// each field tagged `source:"key"` gets the value of that key, which must
// have the field's type. Keys the struct does not name are left alone
// (they belong to the config's other sections or other sources), and a
// field whose key is absent keeps its value.
func Decode(settings Settings, into any) error {
	v := reflect.ValueOf(into)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("source.Decode: want a pointer to a struct, got %T", into)
	}
	v = v.Elem()
	t := v.Type()
	for i := range t.NumField() {
		key, ok := t.Field(i).Tag.Lookup("source")
		if !ok {
			continue
		}
		val, ok := settings[key]
		if !ok || val == nil {
			continue
		}
		rv := reflect.ValueOf(val)
		if !rv.Type().AssignableTo(t.Field(i).Type) {
			return fmt.Errorf("source.%s: a %s, not a %T", key, t.Field(i).Type, val)
		}
		v.Field(i).Set(rv)
	}
	return nil
}
