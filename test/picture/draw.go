package picture

import (
	"fmt"
	"strings"

	"github.com/analysis-health/analysis-health/test/svg"
	"github.com/analysis-health/analysis-health/test/timeline"
)

// The picture's geometry, in CSS pixels at its natural size. 900 wide: GitHub scales it to its content
// width (svg.ContentWidth, 830), and 12-pixel text stays above 11 there.
const (
	width     = 900.0
	margin    = 16.0
	labelW    = 212.0
	plotX0    = margin + labelW + 8
	plotX1    = width - 20
	laneH     = 26.0
	runLaneH  = 42.0
	barH      = 20.0
	runBarH   = 14.0
	textSize  = 12.0
	titleSize = 17.0
	headSize  = 13.0
)

// Colours: on an opaque white card, so the picture reads the same in GitHub's light and dark themes.
const (
	ink     = "#1f2328"
	muted   = "#59636e"
	card    = "#ffffff"
	border  = "#d0d7de"
	band    = "#f6f8fa"
	grid    = "#e4e8ec"
	badInk  = "#a40e26"
	goodInk = "#116329"
)

// paint is a state's fill and the ink of a label on it.
type paint struct{ fill, ink string }

// palette colours a state by its first word: one colour for the good end state of every kind (a run
// Successful, an Application Healthy, a Promotion Succeeded), one for work in progress, and so on.
var palette = []struct {
	words []string
	p     paint
	label string
}{
	{[]string{"Successful", "Healthy", "Succeeded"}, paint{"#1a7f37", "#ffffff"}, "Successful · Healthy · Succeeded"},
	{[]string{"Running", "Progressing"}, paint{"#54aeff", ink}, "Running · Progressing"},
	{[]string{"Pending"}, paint{"#d0d7de", ink}, "Pending"},
	{[]string{"Paused", "Suspended"}, paint{"#c297ff", ink}, "Paused · Suspended"},
	{[]string{"Inconclusive"}, paint{"#eac54f", ink}, "Inconclusive"},
	{[]string{"Failed", "Degraded", "Unhealthy", "Errored"}, paint{"#cf222e", "#ffffff"}, "Failed · Degraded · Unhealthy · Errored"},
	{[]string{"Error"}, paint{"#82071e", "#ffffff"}, "Error"},
	{[]string{"Missing", "Unknown", "none"}, paint{"#6e7781", "#ffffff"}, "Missing · Unknown · no phase"},
}

func colour(state string) paint {
	w := state
	if i := strings.IndexAny(w, " ,:("); i >= 0 {
		w = w[:i]
	}
	for _, e := range palette {
		for _, x := range e.words {
			if x == w {
				return e.p
			}
		}
	}
	return paint{"#6e7781", "#ffffff"}
}

// canvas is a picture being drawn: the document, the time scale and the y cursor.
type canvas struct {
	bg    *svg.Doc // under the lanes: group bands, the legend's card
	d     *svg.Doc
	y     float64
	end   float64 // seconds at the right edge of the plot
	times []float64
}

func (c *canvas) x(t float64) float64 {
	if t < 0 {
		t = 0
	}
	if t > c.end {
		t = c.end
	}
	return plotX0 + t/c.end*(plotX1-plotX0)
}

func (c *canvas) text(x, y float64, s string, st svg.TextStyle) {
	if st.Size == 0 {
		st.Size = textSize
	}
	if st.Fill == "" {
		st.Fill = ink
	}
	c.d.Text(x, y, st, s)
}

// fit is the first label that fits in w at the text size, "" if none does.
func fit(w float64, labels ...string) string {
	for _, l := range labels {
		if svg.TextWidth(l, textSize, false)+8 <= w {
			return l
		}
	}
	return ""
}

// clip shortens s with an ellipsis until it fits in w.
func clip(s string, w float64, bold bool) string {
	if svg.TextWidth(s, textSize, bold) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 1 && svg.TextWidth(string(r)+"…", textSize, bold) > w {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// wrap breaks s into lines no wider than w at size.
func wrap(s string, w, size float64) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		next := word
		if cur != "" {
			next = cur + " " + word
		}
		if cur != "" && svg.TextWidth(next, size, false) > w {
			lines = append(lines, cur)
			next = word
		}
		cur = next
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

func secs(t float64) string { return fmt.Sprintf("+%ds", int(t+0.5)) }

// Draw is the picture of a timeline with what the e2e proof computed for it.
func Draw(tl *timeline.Timeline, r Results) ([]byte, error) {
	n := len(tl.Frames)
	for _, in := range []struct {
		name string
		i    Installation
	}{{"built-in", r.Builtin}, {"ours", r.Ours}} {
		if len(in.i.App) != n || len(in.i.Stage) != n {
			return nil, fmt.Errorf("%s: %d frames, but %d Application and %d Stage health values for %s", tl.Name, n, len(in.i.App), len(in.i.Stage), in.name)
		}
		if in.i.Verified >= n {
			return nil, fmt.Errorf("%s: verified at frame %d of %d for %s", tl.Name, in.i.Verified, n, in.name)
		}
	}
	times, end := frameTimes(tl)
	if r.Builtin.Promo.At > end || r.Ours.Promo.At > end {
		end = max(r.Builtin.Promo.At, r.Ours.Promo.At)
	}
	c := &canvas{bg: &svg.Doc{}, d: &svg.Doc{}, end: end, times: times}
	c.header(tl, r)
	runs := runLanes(tl, times, end)

	// the seconds over the lanes too, for the pictures taller than a screen
	c.y += 14
	for _, t := range ticks(c.end) {
		c.text(c.x(t), c.y, secs(t), svg.TextStyle{Anchor: svg.Middle, Fill: muted})
	}
	c.y += 4
	lanesTop := c.y
	// group 1: what the controllers wrote
	c.group(fmt.Sprintf("Argo Rollouts %s: the revision's analysis, as the controllers recorded it", r.Version), nil, "")
	if len(runs) == 0 {
		c.note(laneH, "analysis", "no AnalysisRun or Experiment for revision "+tl.Revision)
	}
	for _, l := range runs {
		c.runLane(l)
	}
	phases := make([]string, n)
	for i := range tl.Frames {
		p := timeline.Str(tl.Frames[i].Rollout, "status", "phase")
		if p == "" {
			p = "none"
		}
		phases[i] = p
		if m := timeline.Str(tl.Frames[i].Rollout, "status", "message"); m != "" {
			phases[i] += ": " + m
		}
	}
	c.stateLane("Rollout phase", perFrame(times, end, phases, func(v string) []string {
		if v == "none" {
			return []string{"no phase yet", ""}
		}
		return []string{v, strings.SplitN(v, ":", 2)[0]}
	}))
	c.verificationLane("plugin verification, at release", r.AtRelease, 0, true)

	var marks []verifiedLine
	for _, g := range []struct {
		title string
		i     Installation
	}{
		{"Argo CD's built-in Rollout health, and Kargo through it", r.Builtin},
		{"analysis-health's Rollout health (ours), and Kargo through it", r.Ours},
	} {
		c.group(g.title, g.i.Problems, "Kargo agrees with the analysis verdict in every frame.")
		c.stateLane("Application health", perFrame(times, end, g.i.App, func(v string) []string { return []string{v} }))
		c.stateLane("Kargo Stage health", perFrame(times, end, g.i.Stage, func(v string) []string { return []string{v} }))
		if y := c.verifiedLane(tl, g.i.Verified); y > 0 {
			marks = append(marks, verifiedLine{t: times[g.i.Verified], y: y})
		}
		c.promotionLane(g.i.Promo)
		at := 0.0
		if g.i.Verified >= 0 {
			at = times[g.i.Verified]
		}
		c.verificationLane("plugin verification by Kargo", g.i.Verification, at, g.i.Verified >= 0)
	}
	lanesBottom := c.y
	c.axis(tl)
	c.legend()
	c.y += margin

	// the card under everything, then the bands and the grid, the lanes, and the verified moments over them
	out := svg.New(width, c.y)
	out.Comment("Generated by e2e TestKargo (make e2e UPDATE=1) from test/testdata/timelines/" + r.Version + "/" + tl.Name + ".yaml and the proof's results; do not edit.")
	out.Rect(0.5, 0.5, width-1, c.y-1, 6, svg.Style{Fill: card, Stroke: border, StrokeWidth: 1})
	out.Append(c.bg)
	for _, t := range ticks(c.end) {
		out.Line(c.x(t), lanesTop, c.x(t), lanesBottom, svg.Style{Stroke: grid, StrokeWidth: 1})
	}
	out.Append(c.d)
	for _, m := range marks {
		out.Line(c.x(m.t), lanesTop, c.x(m.t), m.y, svg.Style{Stroke: ink, StrokeWidth: 1.5, Dash: "5 3"})
	}
	return out.Bytes(), nil
}

type verifiedLine struct{ t, y float64 }

func (c *canvas) header(tl *timeline.Timeline, r Results) {
	c.y = margin + titleSize
	c.text(margin, c.y, clip(tl.Name, width-2*margin, true), svg.TextStyle{Size: titleSize, Bold: true})
	verdict := tl.Verdict
	if verdict == "" {
		verdict = "none (no analysis)"
	}
	sub := fmt.Sprintf("Argo Rollouts %s · %s · analysis verdict: %s · the update ends %s", r.Version, tl.Strategy, verdict, tl.Outcome)
	for _, l := range wrap(sub, width-2*margin, headSize) {
		c.y += 20
		c.text(margin, c.y, l, svg.TextStyle{Size: headSize})
	}
	c.y += 2
	for _, l := range wrap(tl.Summary, width-2*margin, textSize) {
		c.y += 16
		c.text(margin, c.y, l, svg.TextStyle{Fill: muted})
	}
	c.y += 12
}

// group starts a group of lanes: a band with its title, then what Kargo got wrong (or ok when nothing).
func (c *canvas) group(title string, problems []string, ok string) {
	c.y += 6
	c.bg.Rect(margin/2, c.y, width-margin, 24, 3, svg.Style{Fill: band})
	c.text(margin, c.y+17, clip(title, width-2*margin, true), svg.TextStyle{Size: headSize, Bold: true})
	c.y += 24
	if problems == nil && ok == "" {
		c.y += 4
		return
	}
	lines, fill := []string{ok}, goodInk
	if len(problems) > 0 {
		lines, fill = nil, badInk
		for _, p := range problems {
			lines = append(lines, wrap("✗ Kargo: "+p, width-2*margin, textSize)...)
		}
	}
	for _, l := range lines {
		c.y += 16
		c.text(margin, c.y, l, svg.TextStyle{Fill: fill})
	}
	c.y += 8
}

func (c *canvas) laneLabel(h float64, label string) {
	c.text(margin, c.y+h/2+4, clip(label, labelW, false), svg.TextStyle{})
}

// note is a lane with a sentence instead of a drawing.
func (c *canvas) note(h float64, label, text string) {
	c.laneLabel(h, label)
	c.text(plotX0+4, c.y+h/2+4, clip(text, plotX1-plotX0-8, false), svg.TextStyle{Fill: muted})
	c.y += h
}

// stateLane draws one state per stretch of time, labelled where the label fits.
func (c *canvas) stateLane(label string, spans []span) {
	c.laneLabel(laneH, label)
	top := c.y + (laneH-barH)/2
	for _, s := range spans {
		x0, x1 := c.x(s.From), c.x(s.To)
		p := colour(s.State)
		c.d.Rect(x0, top, x1-x0, barH, 0, svg.Style{Fill: p.fill, Stroke: card, StrokeWidth: 1})
		if l := fit(x1-x0, s.Labels...); l != "" {
			c.text(x0+4, top+barH/2+4, l, svg.TextStyle{Fill: p.ink})
		}
	}
	c.y += laneH
}

// runLane draws an AnalysisRun or Experiment: a bar from its creation in the phase each frame shows,
// lighter after it ended, a tick where it ended, and a mark per measurement.
func (c *canvas) runLane(l *runLane) {
	c.text(margin, c.y+17, clip(l.Label, labelW, false), svg.TextStyle{})
	c.text(margin, c.y+32, clip(l.Name, labelW, false), svg.TextStyle{Fill: muted})
	mid := c.y + 30
	top := mid - runBarH/2
	last := c.x(l.Spans[len(l.Spans)-1].To)
	for _, s := range l.Spans {
		x0, x1 := c.x(s.From), c.x(s.To)
		st := svg.Style{Fill: colour(s.State).fill}
		if s.Faded {
			st.Opacity = 0.35
		}
		c.d.Rect(x0, top, x1-x0, runBarH, 0, st)
	}
	if l.End >= 0 {
		x := c.x(l.End)
		c.d.Line(x, mid-10, x, mid+10, svg.Style{Stroke: ink, StrokeWidth: 2})
	}
	for _, m := range l.Marks {
		measurement(c.d, c.x(m.At), mid, m.Phase)
	}
	// the final phase over the bar, ending where the run ended (or where the bar ends)
	final := strings.SplitN(l.Final, " (", 2)[0]
	labels := []string{"ended " + l.Final, "ended " + final, final}
	at := last
	if l.End < 0 {
		labels = []string{"still " + l.Final, "still " + final, final}
	} else {
		at = c.x(l.End)
	}
	if s := fit(plotX1-plotX0, labels...); s != "" {
		w := svg.TextWidth(s, textSize, false)
		if at-w < plotX0 {
			c.text(plotX0, mid-11, s, svg.TextStyle{})
		} else {
			c.text(at-4, mid-11, s, svg.TextStyle{Anchor: svg.End})
		}
	}
	c.y += runLaneH
}

// measurement draws one measurement's mark: its shape and colour say its phase.
func measurement(d *svg.Doc, x, y float64, phase string) {
	edge := svg.Style{Stroke: ink, StrokeWidth: 1}
	switch phase {
	case "Successful":
		edge.Fill = colour(phase).fill
		d.Circle(x, y, 5, edge)
	case "Failed":
		edge.Fill = colour(phase).fill
		d.Rect(x-5, y-5, 10, 10, 0, edge)
	case "Error":
		edge.Fill = colour(phase).fill
		d.Polygon(edge, x, y-6, x+6, y+5, x-6, y+5)
	case "Inconclusive":
		edge.Fill = colour(phase).fill
		d.Polygon(edge, x, y-6, x+6, y, x, y+6, x-6, y)
	default: // Running, Pending: not measured yet
		edge.Fill = card
		d.Circle(x, y, 4, edge)
	}
}

// verifiedLane marks the moment Kargo verifies the Freight, and returns the y the marker line reaches
// (0 when never verified).
func (c *canvas) verifiedLane(tl *timeline.Timeline, frame int) float64 {
	if frame < 0 {
		c.note(laneH, "Freight verified", "never verified")
		return 0
	}
	c.laneLabel(laneH, "Freight verified")
	t := c.times[frame]
	x, mid := c.x(t), c.y+laneH/2
	c.d.Polygon(svg.Style{Fill: ink}, x, mid-7, x+7, mid, x, mid+7, x-7, mid)
	s := fmt.Sprintf("verified at %s (frame %d)", secs(t), frame)
	if x+12+svg.TextWidth(s, textSize, true) <= plotX1 {
		c.text(x+12, mid+4, s, svg.TextStyle{Bold: true})
	} else {
		c.text(x-12, mid+4, s, svg.TextStyle{Bold: true, Anchor: svg.End})
	}
	c.y += laneH
	return mid
}

func (c *canvas) promotionLane(p Promotion) {
	var spans []span
	if p.Phase == "Running" {
		msg := "Running: " + p.Message
		spans = []span{{From: 0, To: c.end, State: "Running", Labels: []string{msg, "Running at the end of the recording", "Running"}}}
	} else {
		head := fmt.Sprintf("%s at %s", p.Phase, secs(p.At))
		labels := []string{head, p.Phase}
		if p.Message != "" {
			labels = append([]string{head + ": " + p.Message}, labels...)
		}
		running := []string{"Running: the barrier holds the sync", "Running"}
		if fit(c.x(c.end)-c.x(p.At), labels...) == "" {
			// the outcome's own stretch is too short for its words: the Running stretch says it
			running = []string{"Running: the barrier holds the sync; " + head, "Running; " + head, "Running"}
		}
		spans = []span{{From: 0, To: p.At, State: "Running", Labels: running},
			{From: p.At, To: c.end, State: p.Phase, Labels: labels}}
		if p.At >= c.end {
			spans[0].Labels = labels
		}
	}
	c.stateLane("Promotion, with the barrier", spans)
}

// verificationLane draws a plugin verification as the report holds it: where it started on the clock
// (at release: frame 0; Kargo's: when the Stage is first Healthy), then its phases in order as pills
// whose widths mean nothing, because the report records no times.
func (c *canvas) verificationLane(label, seq string, at float64, started bool) {
	switch {
	case seq == "":
		c.note(laneH, label, "no entry in the plugin report")
		return
	case seq == "not started":
		c.note(laneH, label, "not started: the Stage was never Healthy")
		return
	case !started:
		// the recorder decides when Kargo starts on its own; say where the two part ways
		c.note(laneH, label, "the plugin report has "+seq+", but the Stage here was never Healthy")
		return
	}
	c.laneLabel(laneH, label)
	phases := strings.Split(seq, " → ")
	var ws []float64
	total := 0.0
	for i, p := range phases {
		w := svg.TextWidth(p, textSize, false) + 14
		ws = append(ws, w)
		total += w
		if i > 0 {
			total += 18
		}
	}
	x, mid := c.x(at), c.y+laneH/2
	c.d.Polygon(svg.Style{Fill: ink}, x-5, c.y, x+5, c.y, x, c.y+5)
	mid += 2
	start := x + 6
	if start+total > plotX1 {
		start = plotX1 - total
	}
	for i, p := range phases {
		if i > 0 {
			c.text(start+9, mid+4, "→", svg.TextStyle{Anchor: svg.Middle})
			start += 18
		}
		pt := colour(p)
		c.d.Rect(start, mid-9, ws[i], 18, 9, svg.Style{Fill: pt.fill, Stroke: ink, StrokeWidth: 1, Dash: "3 2"})
		c.text(start+ws[i]/2, mid+4, p, svg.TextStyle{Fill: pt.ink, Anchor: svg.Middle})
		start += ws[i]
	}
	c.y += laneH
}

// ticks are the axis' labelled seconds: a round step giving at most 8 intervals.
func ticks(end float64) []float64 {
	step := 600.0
	for _, s := range []float64{5, 10, 15, 20, 30, 60, 120, 300} {
		if end/s <= 8 {
			step = s
			break
		}
	}
	var out []float64
	for t := 0.0; t <= end+1e-9; t += step {
		out = append(out, t)
	}
	return out
}

func (c *canvas) axis(tl *timeline.Timeline) {
	y := c.y + 6
	c.d.Line(plotX0, y, plotX1, y, svg.Style{Stroke: ink, StrokeWidth: 1})
	for _, t := range c.times {
		c.d.Line(c.x(t), y, c.x(t), y+4, svg.Style{Stroke: muted, StrokeWidth: 1})
	}
	for _, t := range ticks(c.end) {
		c.d.Line(c.x(t), y, c.x(t), y+8, svg.Style{Stroke: ink, StrokeWidth: 1.5})
		c.text(c.x(t), y+22, secs(t), svg.TextStyle{Anchor: svg.Middle})
	}
	c.laneLabel(28, "time (seconds)")
	c.y = y + 40
	c.text((plotX0+plotX1)/2, c.y, fmt.Sprintf("seconds after Argo CD applied revision %s (frame 0); short ticks: the %d recorded frames", tl.Revision, len(tl.Frames)), svg.TextStyle{Anchor: svg.Middle, Fill: muted})
	c.y += 8
}

// legend explains every colour and shape the pictures use, the same in every picture.
func (c *canvas) legend() {
	top := c.y + 10
	c.y = top + 22
	c.text(margin+10, c.y, "Legend", svg.TextStyle{Size: headSize, Bold: true})
	type item struct {
		draw func(x, y float64)
		text string
	}
	var items []item
	for _, e := range palette {
		e := e
		items = append(items, item{func(x, y float64) {
			c.d.Rect(x, y-10, 14, 14, 2, svg.Style{Fill: e.p.fill, Stroke: ink, StrokeWidth: 0.5})
		}, e.label})
	}
	for _, m := range []string{"Successful", "Failed", "Error", "Inconclusive", "Running"} {
		m := m
		what := "measurement " + m
		if m == "Running" {
			what = "measurement in progress"
		}
		items = append(items, item{func(x, y float64) { measurement(c.d, x+7, y-3, m) }, what})
	}
	items = append(items,
		item{func(x, y float64) {
			c.d.Rect(x, y-9, 14, 12, 0, svg.Style{Fill: "#1a7f37", Opacity: 0.35})
		}, "a run after it ended, in its final phase"},
		item{func(x, y float64) { c.d.Line(x+7, y-12, x+7, y+6, svg.Style{Stroke: ink, StrokeWidth: 2}) }, "the run ended"},
		item{func(x, y float64) {
			c.d.Line(x+7, y-12, x+7, y+6, svg.Style{Stroke: ink, StrokeWidth: 1.5, Dash: "5 3"})
			c.d.Polygon(svg.Style{Fill: ink}, x+7, y-9, x+13, y-3, x+7, y+3, x+1, y-3)
		}, "Freight verified"},
		item{func(x, y float64) {
			c.d.Rect(x-4, y-11, 22, 16, 8, svg.Style{Fill: "#54aeff", Stroke: ink, StrokeWidth: 1, Dash: "3 2"})
		}, "plugin verification phase"},
	)
	x := margin + 10
	c.y += 24
	for _, it := range items {
		w := 22 + svg.TextWidth(it.text, textSize, false) + 22
		if x+w > width-margin-10 {
			x = margin + 10
			c.y += 22
		}
		it.draw(x, c.y)
		c.text(x+22, c.y+2, it.text, svg.TextStyle{})
		x += w
	}
	note := "▼ where a plugin verification starts (at release: +0s; by Kargo: when the Freight is verified). The plugin report records the order of a verification's phases, not their times: the pills are in order, their widths mean nothing."
	c.y += 8
	for _, l := range wrap(note, width-2*margin-20, textSize) {
		c.y += 16
		c.text(margin+10, c.y, l, svg.TextStyle{Fill: muted})
	}
	c.y += 12
	c.bg.Rect(margin+0.5, top+0.5, width-2*margin-1, c.y-top-1, 4, svg.Style{ID: "legend", Fill: card, Stroke: legendFrame, StrokeWidth: 1})
}

// legendFrame is the legend's frame colour, which the rendering check looks for.
const legendFrame = "#8c959f"
