package errkind_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/errkind"
)

type kinded struct {
	k     errkind.Kind
	where errkind.Where
	err   error
}

func (e *kinded) Error() string        { return "kinded" }
func (e *kinded) Unwrap() error        { return e.err }
func (e *kinded) Kind() errkind.Kind   { return e.k }
func (e *kinded) Where() errkind.Where { return e.where }

func TestOf(t *testing.T) {
	inner := &kinded{k: errkind.Transient, where: errkind.Where{Table: "inner"}}
	outer := &kinded{k: errkind.BadInput, where: errkind.Where{Table: "outer", Pos: changelog.Position{Partition: "p", Offset: 3}}, err: inner}
	tests := []struct {
		name      string
		err       error
		kind      errkind.Kind
		table     string
		located   bool
		badInput  bool
		transient bool
	}{
		{"nil", nil, errkind.Unknown, "", false, false, false},
		{"plain", errors.New("x"), errkind.Unknown, "", false, false, false},
		{"transient", inner, errkind.Transient, "inner", true, false, true},
		{"wrapped transient", fmt.Errorf("ctx: %w", inner), errkind.Transient, "inner", true, false, true},
		{"outermost wins", fmt.Errorf("ctx: %w", outer), errkind.BadInput, "outer", true, true, false},
		{"joined", errors.Join(errors.New("a"), inner), errkind.Transient, "inner", true, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errkind.Of(tt.err); got != tt.kind {
				t.Errorf("Of = %v, want %v", got, tt.kind)
			}
			if got := errkind.IsBadInput(tt.err); got != tt.badInput {
				t.Errorf("IsBadInput = %v, want %v", got, tt.badInput)
			}
			if got := errkind.IsTransient(tt.err); got != tt.transient {
				t.Errorf("IsTransient = %v, want %v", got, tt.transient)
			}
			w, ok := errkind.WhereOf(tt.err)
			if ok != tt.located || w.Table != tt.table {
				t.Errorf("WhereOf = %+v, %v; want table %q, %v", w, ok, tt.table, tt.located)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[errkind.Kind]string{
		errkind.Unknown: "unknown", errkind.BadInput: "bad input",
		errkind.Transient: "transient", errkind.Permanent: "permanent", 99: "unknown",
	} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", k, got, want)
		}
	}
}
