package cli

import (
	"os"
	"runtime/debug"
)

// wholeInputGCPercent is the garbage collector's target while hooks runs. It keeps every
// decoded document until it prints (their output needs all of them), so the live heap only grows while
// they read, and at Go's default each collection re-marks everything read so far: about a fifth of their
// CPU on a 5,000-document chart (docs/performance-cli.md). Collecting at 4× the live heap instead of 2×
// takes most of that back for a peak heap of about five times the decoded input.
const wholeInputGCPercent = 400

// keepingWholeInput sets that target for the rest of a verb, unless the user chose one with GOGC, and
// returns what puts the previous one back.
func keepingWholeInput() (restore func()) { return settingGCPercent(wholeInputGCPercent) }

// streamingGCPercent is the garbage collector's target while inspect reads. It keeps only a summary of
// each object, so the live heap is the current file's bytes plus those summaries, and almost all it
// allocates is garbage at once: collecting at 1.5× the live heap instead of 2× keeps its peak RSS near
// 3.5× the input's size (4.5× at Go's default) on a 50 MB chart, for about a tenth more CPU.
const streamingGCPercent = 50

// streaming sets streamingGCPercent for the rest of a verb, unless the user chose a target with GOGC,
// and returns what puts the previous one back.
func streaming() (restore func()) { return settingGCPercent(streamingGCPercent) }

func settingGCPercent(p int) (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(p)
	return func() { debug.SetGCPercent(prev) }
}
