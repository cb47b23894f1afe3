package rolloutplugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

// Name is the plugin's name: the key of metricProviderPlugins in argo-rollouts-config and of the metric's
// provider.plugin map (utils/config ValidateConfig wants "<namespace>/<name>").
const Name = "analysis-health/rollout-analysis"

// Defaults of the optional config fields.
const (
	DefaultPollInterval = 10 * time.Second
	DefaultAPITimeout   = 10 * time.Second
	// MaxAPITimeout bounds apiTimeout.
	MaxAPITimeout = 60 * time.Second
)

// MeasurementTimeout bounds one whole measurement (a Run or Resume call): the Secret, the Rollout and the
// lists of its runs, and a second direct read when the watches' verdict is not Running, each within
// apiTimeout, all within three.
func MeasurementTimeout(apiTimeout time.Duration) time.Duration { return 3 * apiTimeout }

// Config is the metric's provider.plugin["analysis-health/rollout-analysis"].
type Config struct {
	// Name and Namespace of the Rollout whose analysis is judged.
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Revision to judge: a pod-template hash or a revision number. Empty: the revision that runs Image,
	// or without an image the one the Rollout delivers at the first measurement. Whichever it is, the
	// first measurement pins it (verdict.Pin in the measurement's metadata).
	Revision string `json:"revision,omitempty"`
	// Image is the verified Freight's image (repository:tag): the revision judged is the one whose pod
	// template runs it, and the measurement waits (Running) until the Rollout runs it.
	Image string `json:"image,omitempty"`
	// KubeconfigSecret names a Secret in the AnalysisRun's namespace whose key holds a kubeconfig for the
	// cluster of the Rollout, when that is not the Rollouts controller's own.
	KubeconfigSecret *SecretKey `json:"kubeconfigSecret,omitempty"`
	// Inconclusive is "suspended" (default: an inconclusive analysis is an Inconclusive measurement) or
	// "degraded" (it is Failed), as the scripts' option of the same name.
	Inconclusive string `json:"inconclusive,omitempty"`
	// NoAnalysis is the measurement of a revision fully promoted without any analysis of it (a first
	// deployment, a strategy without analysis, analysis removed in the revision): "successful" (default,
	// the plugin's behaviour before the field existed), "inconclusive" or "failed"
	// (verdict.NoAnalysisPolicies).
	NoAnalysis string `json:"noAnalysis,omitempty"`
	// PollInterval is how long the controller waits before resuming a Running measurement.
	PollInterval string `json:"pollInterval,omitempty"`
	// APITimeout bounds every API call, at most MaxAPITimeout; the controller gives plugin calls no deadline
	// of its own, so the whole measurement has MeasurementTimeout.
	APITimeout string `json:"apiTimeout,omitempty"`

	pollInterval, apiTimeout time.Duration
}

// SecretKey names one key of a Secret.
type SecretKey struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// UnmarshalJSON decodes strictly, and says which field a decoding error is in: encoding/json names an
// unknown field without its parent (`unknown field "x"`), which inside kubeconfigSecret names nothing the
// user wrote at the top (FuzzParseConfig).
func (s *SecretKey) UnmarshalJSON(raw []byte) error {
	type plain SecretKey
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("kubeconfigSecret: %v", err)
	}
	*s = SecretKey(p)
	return nil
}

// ParseConfig reads and checks the plugin config of a metric. Unknown fields are rejected, so a typo
// (kubeconfigSecrets) is an error rather than a silently local read; encoding/json matches field names
// without regard to case, so kubeConfigSecret is kubeconfigSecret.
func ParseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return c, fmt.Errorf("metric has no provider.plugin[%q] config: it needs at least the Rollout's name and namespace", Name)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("provider.plugin[%q] is not a valid config: %v", Name, err)
	}
	var errs []string
	for _, f := range []struct{ field, v string }{{"name", c.Name}, {"namespace", c.Namespace}} {
		switch {
		case f.v == "":
			errs = append(errs, f.field+" is required")
		case strings.Contains(f.v, "{{"):
			errs = append(errs, fmt.Sprintf("%s %q still holds a template: the AnalysisRun has no argument for it", f.field, f.v))
		default:
			if msgs := validation.IsDNS1123Subdomain(f.v); len(msgs) > 0 {
				errs = append(errs, fmt.Sprintf("%s %q is not a valid object name: %s", f.field, f.v, strings.Join(msgs, "; ")))
			}
		}
	}
	for _, f := range []struct{ field, v string }{{"revision", c.Revision}, {"image", c.Image}} {
		switch {
		case strings.Contains(f.v, "${{"):
			errs = append(errs, fmt.Sprintf("%s %q still holds a Kargo expression: Kargo did not evaluate it", f.field, f.v))
		case strings.Contains(f.v, "{{"):
			errs = append(errs, fmt.Sprintf("%s %q still holds a template", f.field, f.v))
		case strings.ContainsAny(f.v, " \t\n"):
			errs = append(errs, fmt.Sprintf("%s %q holds white space", f.field, f.v))
		}
	}
	if s := c.KubeconfigSecret; s != nil {
		if s.Name == "" || s.Key == "" {
			errs = append(errs, "kubeconfigSecret needs both name and key")
		} else if msgs := validation.IsDNS1123Subdomain(s.Name); len(msgs) > 0 {
			errs = append(errs, fmt.Sprintf("kubeconfigSecret.name %q is not a valid Secret name", s.Name))
		}
	}
	switch strings.ToLower(c.Inconclusive) {
	case "", "suspended", "degraded":
	default:
		errs = append(errs, fmt.Sprintf("inconclusive %q is neither suspended nor degraded", c.Inconclusive))
	}
	if _, ok := verdict.NoAnalysisPhase(c.NoAnalysis); !ok {
		errs = append(errs, fmt.Sprintf("noAnalysis %q is not one of %s", c.NoAnalysis, strings.Join(verdict.NoAnalysisPolicies, ", ")))
	}
	var err error
	if c.pollInterval, err = duration("pollInterval", c.PollInterval, DefaultPollInterval); err != nil {
		errs = append(errs, err.Error())
	}
	if c.apiTimeout, err = duration("apiTimeout", c.APITimeout, DefaultAPITimeout); err != nil {
		errs = append(errs, err.Error())
	} else if c.apiTimeout > MaxAPITimeout {
		// the analysis controller waits for every metric of a run on its few threads: a long one stalls
		// the analysis of every tenant
		errs = append(errs, fmt.Sprintf("apiTimeout %q is above the plugin's limit of %s", c.APITimeout, MaxAPITimeout))
	}
	if len(errs) > 0 {
		return c, errors.New("provider.plugin[\"" + Name + "\"]: " + strings.Join(errs, "; "))
	}
	return c, nil
}

func duration(field, s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s %q is not a positive duration", field, s)
	}
	return d, nil
}
