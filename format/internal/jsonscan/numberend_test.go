package jsonscan

import (
	"strings"
	"testing"
)

// TestNumberEnd holds numberEnd to scanNumber (the end of the number it
// accepts, or the number's start when it refuses it) on numbers of every
// shape, well and badly formed, with runs of digits of every length up
// to 20, followed by every kind of byte and then by nothing (the
// byte-at-a-time way) or by enough input for numberEnd's words (17
// bytes from the number's start: its word tests).
func TestNumberEnd(t *testing.T) {
	var nums []string
	for _, n := range []string{"0", "-0", "-", "", "01", "00", "-01", "a", "+1", ".5"} {
		nums = append(nums, n)
	}
	for n := 1; n <= 20; n++ {
		run := strings.Repeat("7", n)
		for _, form := range []string{"%", "-%", "1%", "%.5", "%.", "%.x", "0.%", "1.%", "%.%", "%e5", "%E+5", "%e-%", "%e", "%e+", "%ex", "1.%e%", "0.%.5", "%.%e"} {
			nums = append(nums, strings.ReplaceAll(form, "%", run))
		}
	}
	for _, num := range nums {
		for _, after := range []string{"", ",", "}", "]", " ", "x", ".", "e", "E", "-", "+", "0", "9", "\x00", "\xff", "/", ":"} {
			for _, pad := range []string{"", strings.Repeat(`,"k":1`, 4), strings.Repeat("5", 20)} {
				d := []byte(`{"k":` + num + after + pad)
				i := len(`{"k":`)
				want := i
				if i < len(d) && (d[i] == '-' || isDigit(d[i])) {
					if end, bad := scanNumber(d, i); bad == "" {
						want = end
					}
				}
				if got := numberEnd(d, i); got != want {
					t.Fatalf("numberEnd(%q, %d) = %d, want %d", d, i, got, want)
				}
			}
		}
	}
}
