package verdict

import (
	"maps"
	"slices"
)

// Reads is every field of a Rollout, an AnalysisRun and an Experiment that a judgement reads: this
// package, package analysisruns, the bundled health scripts (lua/argoproj.io/<Kind>/health.lua) and the
// plugin (rolloutplugin: readCached, currentHash, memoKey). It is the one definition of them: Judge reads
// nothing else (it judges Project of its input), and the plugin's watch cache stores Project of each
// object it lists and watches (package watchcache), so a field a judgement starts reading and Reads lacks
// is absent from every judgement, direct or cached, not from the cached ones only.
// TestProjectionJudgesAsTheFullObject holds Reads to every recorded frame.
var Reads = map[string]Fields{
	"Rollout": {
		"metadata": Sub(meta),
		"spec": Sub(Fields{
			"replicas": Whole, "paused": Whole, "workloadRef": Whole,
			// the strategy's analysis and steps (noAnalysisStrategy, the human gate of the script)
			"strategy": Sub(Fields{
				"canary":    Sub(Fields{"steps": Whole, "analysis": Whole}),
				"blueGreen": Sub(Fields{"autoPromotionEnabled": Whole, "prePromotionAnalysis": Whole, "postPromotionAnalysis": Whole}),
			}),
			// podImages
			"template": Sub(Fields{"spec": Sub(Fields{
				"containers":     Each(Fields{"image": Whole}),
				"initContainers": Each(Fields{"image": Whole}),
			})}),
		}),
		"status": Sub(Fields{
			"observedGeneration": Whole, "workloadObservedGeneration": Whole, "phase": Whole, "message": Whole,
			"currentPodHash": Whole, "stableRS": Whole, "currentStepIndex": Whole,
			"replicas": Whole, "updatedReplicas": Whole, "availableReplicas": Whole,
			"pauseConditions": Each(Fields{"reason": Whole}),
			"conditions":      Each(Fields{"type": Whole, "reason": Whole, "message": Whole}),
			"canary": Sub(Fields{"currentStepAnalysisRunStatus": Whole, "currentBackgroundAnalysisRunStatus": Whole,
				"currentExperiment": Whole, "stableRS": Whole}),
			"blueGreen": Sub(Fields{"prePromotionAnalysisRunStatus": Whole, "postPromotionAnalysisRunStatus": Whole,
				"activeSelector": Whole}),
		}),
	},
	"AnalysisRun": {
		"metadata": Sub(meta),
		"spec": Sub(Fields{
			"terminate": Whole, "dryRun": Each(Fields{"metricName": Whole}),
			// a metric's limits (the script's messages, CutShort) and conditions (the value's words,
			// runValue), not its provider
			"metrics": Each(Fields{"name": Whole, "count": Whole, "interval": Whole, "failureLimit": Whole,
				"inconclusiveLimit": Whole, "consecutiveErrorLimit": Whole, "consecutiveSuccessLimit": Whole,
				"successCondition": Whole, "failureCondition": Whole}),
		}),
		"status": Sub(Fields{
			"phase": Whole, "message": Whole,
			"metricResults": Each(Fields{"name": Whole, "phase": Whole, "message": Whole, "dryRun": Whole,
				"count": Whole, "successful": Whole, "failed": Whole, "inconclusive": Whole, "error": Whole,
				"consecutiveError": Whole, "consecutiveSuccess": Whole,
				// runValue's last value, and the AnalysisRun script's why of a verdict (its phase, value
				// and Job); the history before it is read by nothing
				"measurements": Last(Fields{"value": Whole, "phase": Whole,
					"metadata": Sub(Fields{"job-name": Whole})})}),
		}),
	},
	"Experiment": {
		"metadata": Sub(meta),
		"spec":     Sub(Fields{"terminate": Whole}),
		"status": Sub(Fields{"phase": Whole, "message": Whole,
			"analysisRuns": Each(Fields{"name": Whole, "analysisRun": Whole, "phase": Whole, "message": Whole})}),
	},
}

// meta is what is read of every object's metadata: its identity (the memo's uid and resourceVersion, the
// informers' keys), its labels (the selectors), the revision annotations and the owners.
var meta = Fields{
	"name": Whole, "namespace": Whole, "uid": Whole, "resourceVersion": Whole, "generation": Whole,
	"creationTimestamp": Whole, "labels": Whole,
	"annotations":     Sub(Fields{AnnotationRevision: Whole, "rollout.argoproj.io/workload-generation": Whole}),
	"ownerReferences": Each(Fields{"kind": Whole, "name": Whole, "uid": Whole}),
}

// Fields are the kept fields of an object, by name.
type Fields map[string]Field

// Field says what is kept of a field's value. A value of another type than the Field expects (a scalar
// where an object is expected) is kept whole: a judgement reads it as the scripts do, and the projection
// must not change that reading.
type Field struct {
	fields Fields
	list   int // 0: the value is an object (or whole, without fields); each or last: a list of objects
}

const (
	each = 1 + iota
	last
)

// Whole keeps the value as it is.
var Whole = Field{}

// Sub keeps the listed fields of an object.
func Sub(f Fields) Field { return Field{fields: f} }

// Each keeps the listed fields of every object of a list.
func Each(f Fields) Field { return Field{fields: f, list: each} }

// Last keeps the listed fields of the last object of a list, and drops the others.
func Last(f Fields) Field { return Field{fields: f, list: last} }

// Project is what Reads keeps of obj, a decoded object of kind (its own "kind" field when kind is "").
// It shares the kept values with obj: neither may be changed afterwards. An object of a kind Reads does
// not list is returned as it is.
func Project(kind string, obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	if kind == "" {
		kind = str(obj["kind"])
	}
	f, ok := Reads[kind]
	if !ok {
		return obj
	}
	out := project(obj, f)
	// kind and apiVersion: what the object is, for a reader of the store
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := obj[k]; ok {
			out[k] = v
		}
	}
	return out
}

// ProjectObjects is Project of each object.
func ProjectObjects(objs Objects) Objects {
	out := Objects{Rollout: Project("Rollout", objs.Rollout)}
	if objs.AnalysisRuns != nil {
		out.AnalysisRuns = make([]map[string]any, len(objs.AnalysisRuns))
		for i, o := range objs.AnalysisRuns {
			out.AnalysisRuns[i] = Project("AnalysisRun", o)
		}
	}
	if objs.Experiments != nil {
		out.Experiments = make([]map[string]any, len(objs.Experiments))
		for i, o := range objs.Experiments {
			out.Experiments[i] = Project("Experiment", o)
		}
	}
	return out
}

func project(m map[string]any, fs Fields) map[string]any {
	out := make(map[string]any, len(fs))
	for k, f := range fs {
		if v, ok := m[k]; ok {
			out[k] = f.apply(v)
		}
	}
	return out
}

func (f Field) apply(v any) any {
	if f.fields == nil {
		return v
	}
	if f.list == 0 {
		if m, ok := v.(map[string]any); ok {
			return project(m, f.fields)
		}
		return v
	}
	l, ok := v.([]any)
	if !ok {
		return v
	}
	if f.list == last && len(l) > 0 {
		l = l[len(l)-1:]
	}
	out := make([]any, len(l))
	for i, x := range l {
		if m, ok := x.(map[string]any); ok {
			out[i] = project(m, f.fields)
		} else {
			out[i] = x
		}
	}
	return out
}

// Names are the field names Reads keeps, of every kind and depth, sorted and each once, with the
// apiVersion and kind Project adds: the words every projection spells (package watchcache deflates
// projections with them as the dictionary).
func Names() []string {
	seen := map[string]bool{"apiVersion": true, "kind": true}
	var walk func(Fields)
	walk = func(fs Fields) {
		for k, f := range fs {
			seen[k] = true
			walk(f.fields)
		}
	}
	for _, fs := range Reads {
		walk(fs)
	}
	return slices.Sorted(maps.Keys(seen))
}
