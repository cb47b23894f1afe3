package verify

import (
	"reflect"
	"strings"

	"github.com/analysis-health/analysis-health/internal/script/engine"
)

// How Argo CD's TestLuaResourceActionsScript judges an action's output (util/lua/custom_actions_test.go of
// v2.14.21, v3.2.12 and v3.6.2, the same in v3.6.1): it calls gitops-engine's diff.Diff(expected, result) with its
// testNormalizer, and fails only when the result is Modified. Without a last-applied annotation that is a
// two-way diff (pkg/diff/diff.go TwoWayDiff: a three-way merge patch with the expected object as both the
// original and the config), so:
//   - a field the expected object lacks is ignored: the patch never removes what the config never had;
//   - a map compares key by key, recursively;
//   - a list in an object Kubernetes' scheme knows (Deployment, Job: a strategic merge patch) merges
//     element by element, so each expected element need only be held by the result's element in its place;
//   - a list in any other object (a custom resource: a JSON merge patch) is replaced whole, so it must be
//     equal, element fields and all.
// Exact mode (Runner.ExactActions) compares the whole object instead, which is stricter than Argo CD.

// actionMatches reports whether got passes for want under Argo CD's diff, or exactly.
func actionMatches(want, got map[string]any, exact bool) bool {
	if exact {
		return reflect.DeepEqual(want, got)
	}
	apiVersion, _ := want["apiVersion"].(string)
	return holds(want, got, knownToScheme(apiVersion))
}

// holds reports whether got holds every field of want.
func holds(want, got any, strategic bool) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return len(w) == 0 && got == nil
		}
		for k, wv := range w {
			gv, present := g[k]
			if !present {
				if isEmpty(wv) {
					continue
				}
				return false
			}
			if !holds(wv, gv, strategic) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return false
		}
		if !strategic || len(g) < len(w) {
			return reflect.DeepEqual(w, g)
		}
		for i := range w {
			if _, isMap := w[i].(map[string]any); !isMap {
				return reflect.DeepEqual(w, g)
			}
			if !holds(w[i], g[i], strategic) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(want, got)
	}
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// knownToScheme reports whether client-go's scheme, which gitops-engine's diff uses to pick a strategic
// merge patch, holds the API group: the core group, the groups without a dot (apps, batch, policy,
// autoscaling) and Kubernetes' own *.k8s.io groups, but not the x-k8s.io projects, which are custom
// resources.
func knownToScheme(apiVersion string) bool {
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		return true
	}
	if !strings.Contains(group, ".") {
		return true
	}
	return strings.HasSuffix(group, ".k8s.io") && !strings.HasSuffix(group, ".x-k8s.io")
}

// NormalizeFor prepares an action's output and its expected object for comparison as the profile's
// Argo CD release does: Normalize, then the fields that release's testNormalizer overwrites on both sides
// (v2.14.21 blanks a Job's metadata; v3.6 keys its cases on the API group and keeps the other
// annotations of a CloudNativePG Cluster and a Capsule tenant resource).
func NormalizeFor(profile Profile, obj map[string]any) map[string]any {
	return normalizeFor(engine.Profile(profile), obj)
}

func normalizeFor(p engine.Profile, obj map[string]any) map[string]any {
	out := Normalize(obj)
	apiVersion, _ := out["apiVersion"].(string)
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		group = ""
	}
	kind, _ := out["kind"].(string)
	byGroup := p.AtLeast(engine.V36)
	in := func(g string) bool { return !byGroup || group == g }
	const epoch = "0001-01-01T00:00:00Z"
	switch {
	case kind == "Job" && in("batch") && !p.AtLeast(engine.V32):
		out["metadata"] = map[string]any{"name": "not sure why this works"}
	case (kind == "Deployment" || kind == "DaemonSet" || kind == "StatefulSet") && in("apps"):
		// SetNestedStringMap replaces the template's annotations with this one.
		setPath(out, map[string]any{"kubectl.kubernetes.io/restartedAt": epoch}, "spec", "template", "metadata", "annotations")
		if kind == "Deployment" {
			delete(out, "status")
			if meta, ok := out["metadata"].(map[string]any); ok {
				delete(meta, "creationTimestamp")
				delete(meta, "generation")
			}
		}
	case (kind == "ExternalSecret" || kind == "PushSecret") && in("external-secrets.io"):
		setPath(out, map[string]any{"force-sync": epoch}, "metadata", "annotations")
	case fluxKind(kind, group, byGroup):
		setPath(out, map[string]any{"reconcile.fluxcd.io/requestedAt": "By Argo CD at: 0001-01-01T00:00:00"}, "metadata", "annotations")
	case byGroup && kind == "Cluster" && group == "postgresql.cnpg.io":
		mergeAnnotations(out, map[string]any{"cnpg.io/reloadedAt": epoch, "kubectl.kubernetes.io/restartedAt": epoch})
		if status, ok := out["status"].(map[string]any); ok {
			delete(status, "targetPrimaryTimestamp")
		}
	case byGroup && (kind == "TenantResource" || kind == "GlobalTenantResource") && group == "capsule.clastix.io":
		mergeAnnotations(out, map[string]any{"reconcile.projectcapsule.dev/requestedAt": epoch})
	}
	return out
}

// fluxKind: the Flux kinds whose reconcile annotation the normalizer sets, by kind alone before v3.6.
func fluxKind(kind, group string, byGroup bool) bool {
	groups := map[string]string{
		"HelmRelease": "helm.toolkit.fluxcd.io", "Kustomization": "kustomize.toolkit.fluxcd.io",
		"Receiver": "notification.toolkit.fluxcd.io", "ImageRepository": "image.toolkit.fluxcd.io",
		"ImageUpdateAutomation": "image.toolkit.fluxcd.io", "Bucket": "source.toolkit.fluxcd.io",
		"GitRepository": "source.toolkit.fluxcd.io", "HelmChart": "source.toolkit.fluxcd.io",
		"HelmRepository": "source.toolkit.fluxcd.io", "OCIRepository": "source.toolkit.fluxcd.io",
	}
	g, ok := groups[kind]
	return ok && (!byGroup || g == group)
}

// setPath sets obj[fields...] = value, creating the maps on the way, as unstructured.SetNestedField does.
func setPath(obj map[string]any, value any, fields ...string) {
	m := obj
	for _, f := range fields[:len(fields)-1] {
		next, ok := m[f].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[f] = next
		}
		m = next
	}
	m[fields[len(fields)-1]] = value
}

func mergeAnnotations(obj map[string]any, set map[string]any) {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	ann, ok := meta["annotations"].(map[string]any)
	if !ok {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	for k, v := range set {
		ann[k] = v
	}
}
