package engine

import (
	"fmt"
	"strings"
	"time"
)

// hookFinalizer is the finalizer Argo CD v3 puts on sync hooks (gitops-engine pkg/sync/hook
// HookFinalizer); a hook being deleted while it carries it is still evaluated by its script.
const hookFinalizer = "argocd.argoproj.io/hook-finalizer"

// pendingDeletion is gitops-engine's own message for an object being deleted.
const pendingDeletion = "Pending deletion"

// ResourceHealth is what Argo CD records for obj when script is the health script that resolves for its
// kind ("" for none): gitops-engine's GetResourceHealth over util/lua's ResourceHealthOverrides.
//
//   - v2.14: an object with a deletionTimestamp is Progressing "Pending deletion"; no script runs.
//   - v3.2: the same, except for a hook that carries Argo CD's hook finalizer, whose script runs.
//   - v3.6: the script runs for every object. For one being deleted (and not held by the hook finalizer),
//     a result with a deletionMessage gives its status with that message; any other result, including
//     none, gives Progressing "Pending deletion", or "Pending deletion; blocked by finalizers: a, b".
//
// A script error is Unknown with the error's text, and the error, wrapped from v3 on as gitops-engine
// wraps it. A nil result is "no health": for a kind with a built-in Go check (GoHealthCheck) Argo CD then
// uses that check, which this engine does not reproduce.
func (e Engine) ResourceHealth(obj map[string]any, script string) (*Health, error) {
	deleting := deletionTimestamp(obj)
	hookHeld := deleting && hasFinalizer(obj, hookFinalizer)
	switch {
	case !e.Profile.AtLeast(V32) && deleting, !e.Profile.AtLeast(V36) && deleting && !hookHeld:
		return &Health{Status: Progressing, Message: pendingDeletion}, nil
	}
	var h *Health
	if script != "" {
		var err error
		if h, err = e.Execute(obj, script); err != nil {
			h = &Health{Status: Unknown, Message: err.Error()}
			if e.Profile.AtLeast(V32) {
				err = fmt.Errorf("failed to get resource health for %s/%s: %w", metaString(obj, "namespace"), metaString(obj, "name"), err)
			}
			return h, err
		}
	}
	if !e.Profile.AtLeast(V36) || !deleting || hookHeld {
		return h, nil
	}
	if h != nil && h.DeletionMessage != "" {
		return &Health{Status: h.Status, Message: h.DeletionMessage}, nil
	}
	msg := pendingDeletion
	if f := finalizers(obj); len(f) > 0 {
		msg += "; blocked by finalizers: " + strings.Join(f, ", ")
	}
	return &Health{Status: Progressing, Message: msg}, nil
}

// GoHealthCheck reports whether gitops-engine has a built-in Go health check for the kind
// (pkg/health GetHealthCheckFunc), which Argo CD uses when no script gives a health.
func GoHealthCheck(group, kind string) bool {
	switch group + "/" + kind {
	case "apps/Deployment", "apps/StatefulSet", "apps/ReplicaSet", "apps/DaemonSet",
		"extensions/Ingress", "networking.k8s.io/Ingress", "argoproj.io/Workflow",
		"apiregistration.k8s.io/APIService", "/Service", "/PersistentVolumeClaim", "/Pod",
		"batch/Job", "autoscaling/HorizontalPodAutoscaler":
		return true
	}
	return false
}

// The accessors below read metadata as unstructured.Unstructured does, since that is what decides
// deletion in Argo CD: a field of the wrong type reads as absent.

// deletionTimestamp is GetDeletionTimestamp() != nil: a string that parses as RFC 3339 and is not the
// zero time (metav1.Time UnmarshalQueryParameter; an unparseable value is ignored, i.e. zero).
func deletionTimestamp(obj map[string]any) bool {
	s := metaString(obj, "deletionTimestamp")
	if s == "" || s == "null" {
		return false
	}
	t, err := time.Parse(time.RFC3339, s)
	return err == nil && !t.IsZero()
}

// finalizers is GetFinalizers(): nil unless every element is a string.
func finalizers(obj map[string]any) []string {
	meta, _ := obj["metadata"].(map[string]any)
	list, ok := meta["finalizers"].([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}

func hasFinalizer(obj map[string]any, name string) bool {
	for _, f := range finalizers(obj) {
		if f == name {
			return true
		}
	}
	return false
}

func metaString(obj map[string]any, field string) string {
	meta, _ := obj["metadata"].(map[string]any)
	s, _ := meta[field].(string)
	return s
}
