package verify

import (
	"testing"

	"sigs.k8s.io/yaml"
)

// The cases gitops-engine's two-way diff decides, as TestLuaResourceActionsScript sees them; the trees'
// own suites are held to Argo CD's verdicts in test/upstream (TestVerifyPassesWhatArgoCDPasses).
func TestActionMatches(t *testing.T) {
	for _, tc := range []struct {
		name, want, got string
		pass            bool
	}{
		{"equal", "{apiVersion: v1, kind: ConfigMap, data: {a: '1'}}", "{apiVersion: v1, kind: ConfigMap, data: {a: '1'}}", true},
		{"a field the expected object lacks", "{apiVersion: v1, kind: ConfigMap}", "{apiVersion: v1, kind: ConfigMap, data: {a: '1'}}", true},
		{"a field the result lacks", "{apiVersion: v1, kind: ConfigMap, data: {a: '1'}}", "{apiVersion: v1, kind: ConfigMap}", false},
		{"another value", "{apiVersion: v1, kind: ConfigMap, data: {a: '1'}}", "{apiVersion: v1, kind: ConfigMap, data: {a: '2'}}", false},
		{"numbers by value", "{apiVersion: apps/v1, kind: Deployment, spec: {replicas: 3}}", "{apiVersion: apps/v1, kind: Deployment, spec: {replicas: 3.0}}", true},
		{"a built-in kind's list merges element by element",
			"{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [{name: a}]}}}}",
			"{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [{name: a, image: x}]}}}}", true},
		{"a custom resource's list is replaced whole",
			"{apiVersion: example.com/v1, kind: Thing, spec: {items: [{name: a}]}}",
			"{apiVersion: example.com/v1, kind: Thing, spec: {items: [{name: a, image: x}]}}", false},
		{"an x-k8s.io project is a custom resource",
			"{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, spec: {items: [{name: a}]}}",
			"{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, spec: {items: [{name: a, image: x}]}}", false},
		{"a shorter list", "{apiVersion: apps/v1, kind: Deployment, spec: {args: [a, b]}}", "{apiVersion: apps/v1, kind: Deployment, spec: {args: [a]}}", false},
		{"Deployment status is normalized away",
			"{apiVersion: apps/v1, kind: Deployment, metadata: {generation: 2}, status: {replicas: 3}}",
			"{apiVersion: apps/v1, kind: Deployment, metadata: {generation: 1}, status: {replicas: 1}}", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want, got map[string]any
			if err := yaml.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(tc.got), &got); err != nil {
				t.Fatal(err)
			}
			w, g := NormalizeFor(V36, want), NormalizeFor(V36, got)
			if pass := actionMatches(w, g, false); pass != tc.pass {
				t.Errorf("Argo CD's comparison: got %v, want %v", pass, tc.pass)
			}
			if exact := actionMatches(w, g, true); exact && tc.want != tc.got && !tc.pass {
				t.Errorf("exact comparison passes a case Argo CD's fails")
			}
		})
	}
}

// v2.14.21's testNormalizer blanks a Job's metadata, v3's keeps it; v3.6 keys its cases on the group.
func TestNormalizeFor(t *testing.T) {
	job := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j-123"}}
	if m := NormalizeFor(V214, job)["metadata"].(map[string]any); m["name"] != "not sure why this works" {
		t.Errorf("v2.14: %v", m)
	}
	if m := NormalizeFor(V32, job)["metadata"].(map[string]any); m["name"] != "j-123" {
		t.Errorf("v3.2: %v", m)
	}
	other := map[string]any{"apiVersion": "example.com/v1", "kind": "Deployment", "status": map[string]any{"a": "b"}}
	if _, ok := NormalizeFor(V36, other)["status"]; !ok {
		t.Error("v3.6 normalized a Deployment of another group")
	}
	if _, ok := NormalizeFor(V32, other)["status"]; ok {
		t.Error("v3.2 kept the status of a Deployment of another group")
	}
}
