package harness

func Last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

func Keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
