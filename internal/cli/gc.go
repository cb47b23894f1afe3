package cli

import (
	"os"
	"runtime/debug"
)

// wholeInputGCPercent is the garbage collector's target while inspect and hooks run. They keep every
// decoded document until they print (their output needs all of them), so the live heap only grows while
// they read, and at Go's default each collection re-marks everything read so far: about a fifth of their
// CPU on a 5,000-document chart (docs/performance-cli.md). Collecting at 4× the live heap instead of 2×
// takes most of that back for a peak heap of about five times the decoded input.
const wholeInputGCPercent = 400

// keepingWholeInput sets that target for the rest of a verb, unless the user chose one with GOGC, and
// returns what puts the previous one back.
func keepingWholeInput() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(wholeInputGCPercent)
	return func() { debug.SetGCPercent(prev) }
}
