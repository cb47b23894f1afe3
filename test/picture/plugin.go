package picture

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// PluginDir holds the plugin reports, test/rollouts/pluginproof RunPluginVerification's <version>.yaml, relative to
// the e2e directory.
const PluginDir = "testdata/plugin"

// The verifications of a plugin report entry (test/rollouts/kargoverify/plugin.go VerificationAtStart, ...).
const (
	VerificationAtRelease = "at release"
	VerificationBuiltin   = "Kargo, built-in health"
	VerificationOurs      = "Kargo, our health"
)

// PluginReport is a plugin report's verifications by scenario: each a phase sequence ("Running →
// Successful") or "not started". The report records no times.
type PluginReport map[string]map[string]string

// LoadPluginReport reads dir/<version>.yaml; a version without a report has an empty one. The report is
// decoded leniently: the recorder owns its format and may add fields, and the pictures need only the
// verifications, so a field more is no error, but a file that does not parse, or an entry without a
// scenario name, is.
func LoadPluginReport(dir, version string) (PluginReport, error) {
	path := filepath.Join(dir, version+".yaml")
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return PluginReport{}, nil
	} else if err != nil {
		return nil, err
	}
	var r struct {
		Scenarios []struct {
			Scenario      string            `json:"scenario"`
			Verifications map[string]string `json:"verifications"`
		} `json:"scenarios"`
	}
	if err := yaml.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	out := PluginReport{}
	for i, s := range r.Scenarios {
		if s.Scenario == "" {
			return nil, fmt.Errorf("%s: scenario %d has no name", path, i)
		}
		out[s.Scenario] = s.Verifications
	}
	return out, nil
}
