// Package bulkgen builds the big inputs of the bulk benchmarks in memory, so that no 30 MB file is
// committed: a `kind: List` of Rollouts, AnalysisRuns and Experiments as `kubectl get -o json` prints it,
// and a multi-document stream as `helm template` prints it for many releases of the bundled charts.
//
// Both are deterministic (the same n gives the same bytes), so benchmark runs compare like with like.
package bulkgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/analysis-health/analysis-health/lua"
)

// List returns a `kind: List` of n objects as `kubectl get -o json` prints it (four-space indentation,
// keys sorted), cycling through the bundled health fixtures of every kind (steady, in-flight and failed
// analysis alike), each renamed so that every item is distinct.
func List(n int) ([]byte, error) {
	fixtures, err := healthFixtures()
	if err != nil {
		return nil, err
	}
	items := make([]any, 0, n)
	for i := 0; i < n; i++ {
		obj, err := fixtures[i%len(fixtures)].Object()
		if err != nil {
			return nil, err
		}
		meta, _ := obj["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			obj["metadata"] = meta
		}
		meta["name"] = fmt.Sprintf("%v-%05d", meta["name"], i)
		meta["namespace"] = fmt.Sprintf("team-%02d", i%40)
		meta["uid"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		meta["resourceVersion"] = fmt.Sprint(100000 + i)
		items = append(items, obj)
	}
	list := map[string]any{
		"apiVersion": "v1",
		"kind":       "List",
		"metadata":   map[string]any{"resourceVersion": ""},
		"items":      items,
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(list); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// healthFixtures are the health fixtures of every kind (action outputs excluded), sorted by path.
func healthFixtures() ([]lua.Fixture, error) {
	all, err := lua.Fixtures()
	if err != nil {
		return nil, err
	}
	var out []lua.Fixture
	for _, f := range all {
		if !strings.Contains(f.Path, "/actions/") {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no bundled health fixtures")
	}
	return out, nil
}

var templateName = regexp.MustCompile(`(?m)^kind: (?:Cluster)?AnalysisTemplate\nmetadata:\n  name: (\S+)`)

// Chart returns about n documents as `helm template` prints them (`---`, `# Source:` comment, the
// manifest), made of releases of the charts rendered under dir (testdata/charts). Every release renames
// its release name and its analysis templates, so templates resolve within their own release and no two
// releases collide.
func Chart(dir string, n int) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	type chart struct {
		raw  string
		docs int
		name *regexp.Regexp
	}
	var charts []chart
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s := string(raw)
		// The release name is the first path element of every "# Source:" comment.
		m := regexp.MustCompile(`(?m)^# Source: ([a-z0-9-]+)/`).FindStringSubmatch(s)
		if m == nil {
			continue
		}
		names := []string{regexp.QuoteMeta(m[1])}
		for _, t := range templateName.FindAllStringSubmatch(s, -1) {
			names = append(names, regexp.QuoteMeta(t[1]))
		}
		// Longest first, so that "http-success-rate" is renamed whole rather than its "success-rate".
		sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
		charts = append(charts, chart{raw: s, docs: strings.Count(s, "\n---\n") + 1, name: regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)})
	}
	if len(charts) == 0 {
		return nil, fmt.Errorf("%s: no rendered charts", dir)
	}
	var b strings.Builder
	docs := 0
	for release := 0; docs < n; release++ {
		c := charts[release%len(charts)]
		suffix := fmt.Sprintf("-r%05d", release)
		b.WriteString(c.name.ReplaceAllStringFunc(c.raw, func(s string) string { return s + suffix }))
		if !strings.HasSuffix(c.raw, "\n") {
			b.WriteByte('\n')
		}
		docs += c.docs
	}
	return []byte(b.String()), nil
}
