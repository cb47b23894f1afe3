package lua

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// The options block a bundled script may carry (the generator and the CLI set options through it). Options are applied by replacing the values inside it and
// nothing else, so a script never forks from the embedded file and default options give back the embedded
// bytes.
const (
	optionsBegin = "-- analysis-health:options"
	optionsEnd   = "-- analysis-health:end-options"
)

// HumanGateMessage starts the message of a Rollout the humanGate = "Healthy" option makes Healthy (the
// Rollout script's options block): paused where only a person resumes it, every analysis so far passed.
const HumanGateMessage = "waiting for a person; analysis passed"

// optionLine is `local <name> = "<value>"` or `local <name> = true|false`, optionally followed by a comment.
// String values are plain words: the block is data, not code, so escapes, concatenation, numbers, nil and
// expressions are rejected as malformed.
var optionLine = regexp.MustCompile(`^(local\s+([A-Za-z_][A-Za-z0-9_]*)\s*=\s*)(?:"([A-Za-z0-9_.-]*)"|(true|false))(\s*(?:--.*)?)$`)

var optionWord = regexp.MustCompile(`^[A-Za-z0-9_.-]*$`)

// HasOptions reports whether src has an options block line at all; scripts without options (the
// AnalysisRun and Experiment discovery scripts, for instance) are emitted verbatim.
func HasOptions(src string) bool {
	for _, l := range strings.Split(src, "\n") {
		if strings.TrimRight(l, "\r") == optionsBegin {
			return true
		}
	}
	return false
}

// SetOptions sets each named option in src's options block to its value, a string or a bool; the
// script's assignment must have the same type (a quoted word, or true/false), since writing a word where
// the script expects a boolean would make it read an undefined global. Every name must be assigned exactly
// once in the block; lines of the block that are neither blank, comments nor such assignments make the
// block malformed, because silently skipping them could ship a script that ignores the user's choice.
func SetOptions(src string, values map[string]any) (string, error) {
	lines := strings.SplitAfter(src, "\n")
	begin, end := -1, -1
	for i, l := range lines {
		switch strings.TrimRight(l, "\r\n") {
		case optionsBegin:
			if begin >= 0 {
				return "", fmt.Errorf("options block: %q appears twice (lines %d and %d)", optionsBegin, begin+1, i+1)
			}
			begin = i
		case optionsEnd:
			if end >= 0 {
				return "", fmt.Errorf("options block: %q appears twice (lines %d and %d)", optionsEnd, end+1, i+1)
			}
			end = i
		}
	}
	switch {
	case begin < 0:
		return "", fmt.Errorf("options block missing: no %q line", optionsBegin)
	case end < 0:
		return "", fmt.Errorf("options block not closed: no %q line", optionsEnd)
	case end < begin:
		return "", fmt.Errorf("options block malformed: %q (line %d) before %q (line %d)", optionsEnd, end+1, optionsBegin, begin+1)
	}

	seen := map[string]int{}
	for i := begin + 1; i < end; i++ {
		body := strings.TrimRight(lines[i], "\r\n")
		eol := lines[i][len(body):]
		trimmed := strings.TrimSpace(body)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		m := optionLine.FindStringSubmatch(body)
		if m == nil {
			return "", fmt.Errorf("options block malformed at line %d: want `local name = \"value\"` or `local name = true|false`, got %q", i+1, body)
		}
		name, isBool := m[2], m[4] != ""
		if prev, dup := seen[name]; dup {
			return "", fmt.Errorf("options block: %s assigned twice (lines %d and %d)", name, prev, i+1)
		}
		seen[name] = i + 1
		v, ok := values[name]
		if !ok {
			// An option this generator does not know keeps the script's own default.
			continue
		}
		var lit string
		switch v := v.(type) {
		case string:
			if isBool {
				return "", fmt.Errorf("option %s: the script assigns a boolean (line %d), got the string %q", name, i+1, v)
			}
			if !optionWord.MatchString(v) {
				return "", fmt.Errorf("option %s: value %q is not a plain word", name, v)
			}
			lit = `"` + v + `"`
		case bool:
			if !isBool {
				return "", fmt.Errorf("option %s: the script assigns a string (line %d), got the boolean %v", name, i+1, v)
			}
			lit = fmt.Sprint(v)
		default:
			return "", fmt.Errorf("option %s: value %v of type %T is neither a string nor a bool", name, v, v)
		}
		lines[i] = m[1] + lit + m[5] + eol
	}
	var missing []string
	for name := range values {
		if _, ok := seen[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return "", fmt.Errorf("options block has no assignment of %s", strings.Join(missing, ", "))
	}
	return strings.Join(lines, ""), nil
}
