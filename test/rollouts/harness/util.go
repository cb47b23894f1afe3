package harness

// Last is the last of s, or "" when s is empty.
func Last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}
