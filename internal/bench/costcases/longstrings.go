package costcases

import "strings"

// EmptyLongStrings is src with the contents of its long strings ([[…]], [==[…]==]) removed, and the
// number of bytes removed. The result parses to the same code with empty strings in their place, so
// parsing src minus parsing the result is what the lexer spends reading those bytes: in a VM that parses
// every call, the price of the lazily compiled chunks of a script even when none of them runs. Quoted
// strings and comments are skipped, so a bracket inside them is not mistaken for a long string.
func EmptyLongStrings(src string) (string, int) {
	var b strings.Builder
	removed := 0
	for i := 0; i < len(src); {
		switch c := src[i]; {
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			j := i + 2
			if level, ok := openLongBracket(src[j:]); ok {
				j = closeLongBracket(src, j+level+2, level)
			} else {
				for j < len(src) && src[j] != '\n' {
					j++
				}
			}
			b.WriteString(src[i:j])
			i = j
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(src))
			b.WriteString(src[i:j])
			i = j
		case c == '[':
			level, ok := openLongBracket(src[i:])
			if !ok {
				b.WriteByte(c)
				i++
				continue
			}
			open := level + 2
			end := closeLongBracket(src, i+open, level)
			b.WriteString(src[i : i+open])
			b.WriteString(src[end-open : end])
			removed += end - i - 2*open
			i = end
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), removed
}

// openLongBracket reports whether s starts with [[, [=[, …, and its level (the number of =).
func openLongBracket(s string) (int, bool) {
	n := 1
	for n < len(s) && s[n] == '=' {
		n++
	}
	if len(s) > n && s[0] == '[' && s[n] == '[' {
		return n - 1, true
	}
	return 0, false
}

// closeLongBracket is the index just past the long bracket of this level closing at or after from, or
// the end of s when it is not closed (the parser reports that; here it only ends the scan).
func closeLongBracket(s string, from, level int) int {
	closer := "]" + strings.Repeat("=", level) + "]"
	if k := strings.Index(s[from:], closer); k >= 0 {
		return from + k + len(closer)
	}
	return len(s)
}
