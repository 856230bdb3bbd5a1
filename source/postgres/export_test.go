package postgres

// PartlyCopied returns the tables a stored mark says were copied in part:
// some chunks committed, not all.
func PartlyCopied(mark string) []string {
	st, err := parseMark(mark)
	if err != nil || st == nil {
		return nil
	}
	var out []string
	for t, ts := range st.Tables {
		if ts.After != nil && !ts.Done {
			out = append(out, t)
		}
	}
	return out
}
