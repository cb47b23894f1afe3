package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// The fields of the Argo Rollouts v1alpha1 API (v1.8.5, pkg/apis/rollouts/v1alpha1/types.go and
// analysis_types.go) that inspect reads. They are declared here rather than imported so that the shipped
// binary does not depend on the Rollouts module; the tests decode the same charts into the real types.

type rolloutSpec struct {
	Paused                  bool   `json:"paused"`
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds"`
	ProgressDeadlineAbort   bool   `json:"progressDeadlineAbort"`
	Strategy                struct {
		Canary    *canaryStrategy    `json:"canary"`
		BlueGreen *blueGreenStrategy `json:"blueGreen"`
	} `json:"strategy"`
}

// rolloutSpecKeys are the keys of a Rollout's spec that rolloutSpec reads, from its own json tags, so
// that RolloutSpecRead cannot drift from what Summarize decodes.
var rolloutSpecKeys = func() []string {
	t := reflect.TypeOf(rolloutSpec{})
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return keys
}()

// RolloutSpecRead is the part of a Rollout's spec that inspect reads: a caller that must hold many
// Rollouts at once (hooks) keeps this instead of the whole spec, whose pod template is most of it.
func RolloutSpecRead(spec any) any {
	m, ok := spec.(map[string]any)
	if !ok {
		return spec // not an object: Summarize reports it as it is
	}
	out := make(map[string]any, len(rolloutSpecKeys))
	for _, k := range rolloutSpecKeys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

type canaryStrategy struct {
	Steps    []canaryStep        `json:"steps"`
	Analysis *backgroundAnalysis `json:"analysis"`
}

type canaryStep struct {
	SetWeight  *int32           `json:"setWeight"`
	Pause      *rolloutPause    `json:"pause"`
	Analysis   *rolloutAnalysis `json:"analysis"`
	Experiment *experimentStep  `json:"experiment"`
}

type rolloutPause struct {
	// Duration is an IntOrString: seconds, or a string of seconds or a Go duration.
	Duration any `json:"duration"`
}

type blueGreenStrategy struct {
	AutoPromotionEnabled  *bool            `json:"autoPromotionEnabled"`
	AutoPromotionSeconds  int32            `json:"autoPromotionSeconds"`
	PrePromotionAnalysis  *rolloutAnalysis `json:"prePromotionAnalysis"`
	PostPromotionAnalysis *rolloutAnalysis `json:"postPromotionAnalysis"`
}

type rolloutAnalysis struct {
	Templates            []templateRef       `json:"templates"`
	Args                 []rolloutArg        `json:"args"`
	DryRun               []metricRule        `json:"dryRun"`
	MeasurementRetention []metricRule        `json:"measurementRetention"`
	AnalysisRunMetadata  analysisRunMetadata `json:"analysisRunMetadata"`
}

type backgroundAnalysis struct {
	rolloutAnalysis
	StartingStep *int32 `json:"startingStep"`
}

type experimentStep struct {
	Duration            string               `json:"duration"`
	Analyses            []experimentAnalysis `json:"analyses"`
	DryRun              []metricRule         `json:"dryRun"`
	AnalysisRunMetadata analysisRunMetadata  `json:"analysisRunMetadata"`
}

type experimentAnalysis struct {
	Name                  string       `json:"name"`
	TemplateName          string       `json:"templateName"`
	ClusterScope          bool         `json:"clusterScope"`
	Args                  []rolloutArg `json:"args"`
	RequiredForCompletion bool         `json:"requiredForCompletion"`
}

type templateRef struct {
	TemplateName string `json:"templateName"`
	ClusterScope bool   `json:"clusterScope"`
}

// rolloutArg is AnalysisRunArgument: a value, or a value the Rollout controller fills in
// (podTemplateHashValue, fieldRef).
type rolloutArg struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	ValueFrom *struct {
		PodTemplateHashValue string `json:"podTemplateHashValue"`
		FieldRef             *struct {
			FieldPath string `json:"fieldPath"`
		} `json:"fieldRef"`
	} `json:"valueFrom"`
}

type metricRule struct {
	MetricName string `json:"metricName"`
}

type analysisRunMetadata struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type templateSpec struct {
	Args                 []templateArg `json:"args"`
	Metrics              []metric      `json:"metrics"`
	DryRun               []metricRule  `json:"dryRun"`
	MeasurementRetention []metricRule  `json:"measurementRetention"`
	Templates            []templateRef `json:"templates"`
}

// templateArg is Argument: a default value, or valueFrom a Secret (resolved by the analysis controller)
// or a fieldRef (resolved only by a Rollout or Experiment that creates the run).
type templateArg struct {
	Name      string  `json:"name"`
	Value     *string `json:"value"`
	ValueFrom *struct {
		SecretKeyRef *struct {
			Name string `json:"name"`
			Key  string `json:"key"`
		} `json:"secretKeyRef"`
		FieldRef *struct {
			FieldPath string `json:"fieldPath"`
		} `json:"fieldRef"`
	} `json:"valueFrom"`
}

type metric struct {
	Name                    string         `json:"name"`
	Interval                string         `json:"interval"`
	InitialDelay            string         `json:"initialDelay"`
	Count                   any            `json:"count"`
	ConsecutiveSuccessLimit any            `json:"consecutiveSuccessLimit"`
	Provider                map[string]any `json:"provider"`
}

// decodeInto converts a decoded object (or part of one) into one of the structs above. Fields of the
// wrong type are reported: the API server would reject the object, and guessing would be worse.
func decodeInto(v any, out any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return fieldError(json.Unmarshal(raw, out))
}

// fieldError words a type mismatch by the field and the JSON types, never the Go type it was decoded
// into: "spec.strategy: want an object, got a string".
func fieldError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	want := "a " + te.Type.Kind().String()
	switch te.Type.Kind() {
	case reflect.Struct, reflect.Map:
		want = "an object"
	case reflect.Slice, reflect.Array:
		want = "a list"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Float64:
		want = "a number"
	case reflect.Bool:
		want = "true or false"
	}
	got, ok := map[string]string{"string": "a string", "number": "a number", "object": "an object", "array": "a list", "bool": "true or false"}[te.Value]
	if !ok {
		got = te.Value
	}
	if te.Field != "" {
		return fmt.Errorf("%s: want %s, got %s", te.Field, want, got)
	}
	return fmt.Errorf("want %s, got %s", want, got)
}

// intOrString reads an IntOrString the way intstr.IntValue does for the fields we estimate with:
// ok is false for a string that is not a number (e.g. "{{args.count}}", resolved only at run time).
func intOrString(v any) (n int, set, ok bool) {
	switch x := v.(type) {
	case nil:
		return 0, false, true
	case float64:
		return int(x), true, true
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return 0, true, false
		}
		return i, true, true
	}
	return 0, true, false
}

// pauseSeconds reproduces RolloutPause.DurationSeconds (types.go): an int is seconds; a string is seconds
// if it parses as an integer, else a Go duration. ok is false where the controller gets -1.
func pauseSeconds(d any) (time.Duration, bool) {
	switch x := d.(type) {
	case float64:
		return time.Duration(x) * time.Second, true
	case string:
		if s, err := strconv.ParseInt(x, 10, 32); err == nil {
			return time.Duration(s) * time.Second, true
		}
		if dur, err := time.ParseDuration(x); err == nil {
			return dur.Truncate(time.Second), true
		}
	}
	return 0, false
}

// parseDuration reads a DurationString (Go duration syntax); "" is zero.
func parseDuration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a duration", field, s)
	}
	return d, nil
}
