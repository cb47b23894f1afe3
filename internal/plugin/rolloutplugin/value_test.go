package rolloutplugin_test

import (
	"encoding/json"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

// valueProblem says what is wrong with a measurement's value and structured verdict, or "": the value is
// a JSON string (Kargo's UI JSON.parses it and shows a string's text; docs/kargo.md "What the
// Verification tab shows") and the metadata's verdict compact JSON naming the measurement's phase (but
// for a measurement the controller terminated, Terminate's Successful: the verdict it had), each within
// the bound.
func valueProblem(m v1alpha1.Measurement) string {
	var words string
	structured := m.Metadata[verdict.MetadataVerdict]
	var s struct {
		Verdict string `json:"verdict"`
	}
	switch {
	case !strings.HasPrefix(m.Value, `"`) || json.Unmarshal([]byte(m.Value), &words) != nil:
		return "the value is not a JSON string: " + m.Value
	case len(m.Value) > verdict.DefaultMaxValueBytes || len(structured) > verdict.DefaultMaxValueBytes:
		return "over the bound: " + m.Value + " " + structured
	case json.Unmarshal([]byte(structured), &s) != nil || strings.Contains(structured, "\n"):
		return "the metadata's verdict is not compact JSON: " + structured
	case !strings.HasPrefix(m.Message, "terminated before") && s.Verdict != string(m.Phase):
		return "the metadata's verdict " + s.Verdict + " is not the measurement's phase " + string(m.Phase)
	}
	return ""
}

// measurementTexts are the texts of a measurement that reach the AnalysisRun: value, message and metadata.
func measurementTexts(m v1alpha1.Measurement) string {
	return m.Value + "\n" + m.Message + "\n" + strings.Join(mapValues(m.Metadata), "\n")
}
