// Package bulktext writes field text in the tab-separated format that
// MySQL's LOAD DATA and PostgreSQL's COPY read by default: fields end at a
// tab, rows at a newline, and a backslash starts an escape. txsink's
// loaders and its bench's reference dumps write it, so the escaping rules
// live here once.
package bulktext

// AppendEscaped appends s with the bytes that would end a field or a row,
// or start an escape, written as backslash escapes: \\, \t, \n, \r; with
// nul, NUL as \0 too (LOAD DATA's spelling; COPY text cannot carry a NUL,
// and the server refuses one either way). Byte by byte is right for UTF-8
// and for binary data alike: no byte of a multibyte UTF-8 character is
// ASCII.
func AppendEscaped[S string | []byte](b []byte, s S, nul bool) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		var e byte
		switch s[i] {
		case '\\':
			e = '\\'
		case '\t':
			e = 't'
		case '\n':
			e = 'n'
		case '\r':
			e = 'r'
		case 0:
			if !nul {
				continue
			}
			e = '0'
		default:
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, '\\', e)
		start = i + 1
	}
	return append(b, s[start:]...)
}
