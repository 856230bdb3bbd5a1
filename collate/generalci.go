package collate

import "sync"

// generalCI returns the weight of every Basic Multilingual Plane character
// in MariaDB's utf8mb4_general_ci, built once from generalCIDiffs.
var generalCI = sync.OnceValue(func() *[0x10000]uint16 {
	var w [0x10000]uint16
	for i := range w {
		w[i] = uint16(i)
	}
	for _, d := range generalCIDiffs {
		w[d>>16] = uint16(d)
	}
	return &w
})
