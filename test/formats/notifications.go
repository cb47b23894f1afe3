package formats

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	jsonpatch "github.com/evanphx/json-patch"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
)

// Notifications installs generate --format notifications both ways a user does, and returns the
// argocd-notifications-cm data a notifications controller then reads:
//   - the merge patches, applied as `kubectl patch --type merge` (RFC 7386) onto the catalog's
//     argocd-notifications-cm (catalog: Argo CD's notifications_catalog/install.yaml, what its docs have
//     users apply) and onto the empty argocd-cmd-params-cm Argo CD's install.yaml ships;
//   - the Helm values, rendered with the vendored argo-helm argo-cd chart by Helm's library (Render), their
//     keys being ones the chart's values.yaml defines.
//
// Both must give the same trigger and template and set controller.resource.health.persist; the returned
// data is the patched catalog with the chart's context (argocdUrl) added.
func Notifications(t *testing.T, opts generator.NotificationsOptions, catalog string) map[string]string {
	t.Helper()
	files, err := generator.GenerateNotifications(opts)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string][]byte{}
	for _, f := range files {
		byPath[f.Path] = f.Data
	}
	want, err := generator.NotificationsData(opts)
	if err != nil {
		t.Fatal(err)
	}

	// the patches
	raw, err := os.ReadFile(catalog)
	if err != nil {
		t.Fatal(err)
	}
	cat := patched(t, raw, byPath[generator.NotificationsCMPatchFile])
	if cat.Name != "argocd-notifications-cm" || len(cat.Data) <= len(want) {
		t.Fatalf("%s patched is %s with %d keys: not the catalog", catalog, cat.Name, len(cat.Data))
	}
	var base corev1.ConfigMap
	if err := yaml.Unmarshal(raw, &base); err != nil {
		t.Fatal(err)
	}
	for k, v := range base.Data {
		if _, ours := want[k]; !ours && cat.Data[k] != v {
			t.Errorf("the patch changed the catalog's %s", k)
		}
	}
	empty := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cmd-params-cm\n  namespace: argocd\n")
	params := patched(t, empty, byPath[generator.CmdParamsPatchFile])
	if params.Data[generator.PersistResourceHealthKey] != "true" {
		t.Errorf("argocd-cmd-params-cm patched: %v, want %s: \"true\"", params.Data, generator.PersistResourceHealthKey)
	}

	// the Helm values
	chart := ChartCopy(t)
	checkValuesKeys(t, filepath.Join(chart, "values.yaml"), byPath[generator.NotificationsValuesFile])
	var helmCM, helmParams *corev1.ConfigMap
	for _, m := range Render(t, chart, byPath[generator.NotificationsValuesFile], "argocd", "argocd") {
		var obj corev1.ConfigMap
		if err := yaml.Unmarshal([]byte(m.Doc), &obj); err != nil || obj.Kind != "ConfigMap" {
			continue
		}
		switch obj.Name {
		case "argocd-notifications-cm":
			helmCM = &obj
		case "argocd-cmd-params-cm":
			helmParams = &obj
		}
	}
	if helmCM == nil || helmParams == nil {
		t.Fatal("the chart rendered no argocd-notifications-cm or argocd-cmd-params-cm")
	}
	if helmParams.Data[generator.PersistResourceHealthKey] != "true" {
		t.Errorf("the chart's argocd-cmd-params-cm: %s = %q, want \"true\"", generator.PersistResourceHealthKey, helmParams.Data[generator.PersistResourceHealthKey])
	}
	if helmParams.Data["controller.log.level"] == "" {
		t.Error("the chart's own argocd-cmd-params-cm presets are missing: was the real chart rendered?")
	}
	for k, v := range want {
		// the chart's `{{- end }}` after the last key eats its final newline, which leaves the document the
		// engine parses (pkg/api config.go ParseConfig) unchanged: compare what it parses
		if !sameYAML(t, helmCM.Data[k], v) {
			t.Errorf("the chart's argocd-notifications-cm %s:\n%q\nwant:\n%q", k, helmCM.Data[k], v)
		}
		if cat.Data[k] != v {
			t.Errorf("the patched argocd-notifications-cm %s:\n%s\nwant:\n%s", k, cat.Data[k], v)
		}
	}
	if helmCM.Data["context"] == "" {
		t.Fatal("the chart's argocd-notifications-cm has no context (argocdUrl)")
	}
	out := map[string]string{"context": helmCM.Data["context"]}
	for k, v := range cat.Data {
		out[k] = v
	}
	return out
}

// sameYAML: a and b are YAML documents of the same value.
func sameYAML(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := yaml.UnmarshalStrict([]byte(a), &va); err != nil {
		t.Errorf("%v:\n%s", err, a)
		return false
	}
	if err := yaml.UnmarshalStrict([]byte(b), &vb); err != nil {
		t.Errorf("%v:\n%s", err, b)
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// patched is the ConfigMap base (YAML) with the merge patch (YAML) applied.
func patched(t *testing.T, base, patch []byte) *corev1.ConfigMap {
	t.Helper()
	b, err := yaml.YAMLToJSON(base)
	if err != nil {
		t.Fatal(err)
	}
	p, err := yaml.YAMLToJSON(patch)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := jsonpatch.MergePatch(b, p)
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(merged, &cm); err != nil {
		t.Fatal(err)
	}
	return &cm
}

// checkValuesKeys: every map of the values (down to the maps whose keys are the chart's ConfigMap keys:
// configs.params, notifications.triggers, notifications.templates) is a map the chart's values.yaml
// defines, so the chart reads each key where we put it.
func checkValuesKeys(t *testing.T, chartValues string, values []byte) {
	t.Helper()
	raw, err := os.ReadFile(chartValues)
	if err != nil {
		t.Fatal(err)
	}
	var chart, ours map[string]any
	if err := yaml.Unmarshal(raw, &chart); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(values, &ours); err != nil {
		t.Fatal(err)
	}
	leaves := map[string]bool{"configs.params": true, "notifications.triggers": true, "notifications.templates": true}
	var walk func(path string, o, c map[string]any)
	walk = func(path string, o, c map[string]any) {
		for k, v := range o {
			p := k
			if path != "" {
				p = path + "." + k
			}
			cv, ok := c[k]
			cm, isMap := cv.(map[string]any)
			if !ok || !isMap {
				t.Errorf("values %s: the chart's values.yaml has no map %s (%v)", p, p, reflect.TypeOf(cv))
				continue
			}
			if leaves[p] {
				continue
			}
			om, _ := v.(map[string]any)
			walk(p, om, cm)
		}
	}
	walk("", ours, chart)
}
