package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"
	goyaml "sigs.k8s.io/yaml/goyaml.v2"

	"github.com/analysis-health/analysis-health/internal/install/argocdcm"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
)

// argocdCMExpected says what --argocd-cm reads, for the errors about anything else.
const argocdCMExpected = "--argocd-cm reads the argocd-cm ConfigMap (apiVersion v1, kind ConfigMap, name argocd-cm) " +
	"or the merge patch `generate --format patch` writes (a top-level data map of strings)"

// readArgoCDCM reads the file given with --argocd-cm ("-": standard input) and returns argocd-cm's data.
// It is either the argocd-cm ConfigMap (kubectl get configmap argocd-cm -o yaml) or the JSON merge patch
// `generate --format patch` writes for kubectl patch, whose data is the ConfigMap's as far as the scripts
// go: the keys it adds are the ones Argo CD then reads. Anything else is an error naming the file and
// saying what is expected.
func readArgoCDCM(path string, stdin io.Reader) (map[string]string, error) {
	if _, err := os.Stat(path); path != "-" && err != nil {
		return nil, fmt.Errorf("--argocd-cm %s: %w", path, pathError(err))
	}
	if info, err := os.Stat(path); path == "-" || (err == nil && !info.IsDir()) {
		raw, err := readSource(path, stdin)
		if err != nil {
			return nil, err
		}
		if patch, ok, err := mergePatch(path, raw); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return patchData(path, patch)
		}
		objs, err := manifest.Decode(path, raw)
		if err != nil {
			return nil, err
		}
		return configMapData(path, objs)
	}
	objs, err := manifest.Read([]string{path}, stdin)
	if err != nil {
		return nil, err
	}
	return configMapData(path, objs)
}

func readSource(path string, stdin io.Reader) ([]byte, error) {
	if path != "-" {
		return os.ReadFile(path)
	}
	if stdin == nil {
		return nil, errors.New("-: no standard input")
	}
	raw, err := io.ReadAll(stdin)
	if err != nil {
		return nil, fmt.Errorf("-: cannot read standard input (closed?): %w", pathError(err))
	}
	return raw, nil
}

func configMapData(path string, objs []manifest.Object) (map[string]string, error) {
	if len(objs) != 1 {
		err := fmt.Errorf("%s: want exactly one argocd-cm ConfigMap (or the merge patch `generate --format patch` writes), found %d objects", path, len(objs))
		for _, o := range objs {
			if o.APIVersion() == "v1" && o.Kind() == "ConfigMap" && o.Name() == "argocd-cm" {
				// A whole `helm template` of the argo-cd chart (or a kustomize build): the ConfigMap is
				// there, among the rest; say how to render it alone, as the Helm-values error does.
				return nil, fmt.Errorf("%w, among them the ConfigMap argocd-cm (%s): pass it alone, e.g. helm template argo-cd argo/argo-cd -f VALUES "+
					"--show-only templates/argocd-configs/argocd-cm.yaml, or kubectl get configmap argocd-cm -n argocd -o yaml", err, o.Where())
			}
		}
		return nil, err
	}
	data, err := argocdcm.DataFromObject(objs[0].Where(), objs[0].Object)
	if err != nil && (objs[0].APIVersion() != "v1" || objs[0].Kind() != "ConfigMap") {
		return nil, fmt.Errorf("%w; %s", err, argocdCMExpected)
	}
	return data, err
}

// mergePatch reports whether raw is one YAML or JSON document that is not a Kubernetes object (no
// apiVersion, no kind): what a merge patch is. ok is false for anything else, which is read as objects.
// A document that is neither an object nor a map is an error saying what --argocd-cm wants.
func mergePatch(path string, raw []byte) (patch map[string]any, ok bool, err error) {
	dec := goyaml.NewDecoder(bytes.NewReader(raw))
	var docs []any
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, false, nil // malformed: manifest's error says where
		}
		if v != nil {
			docs = append(docs, v)
		}
	}
	if len(docs) != 1 {
		return nil, false, nil
	}
	m, isMap := docs[0].(map[any]any)
	if !isMap {
		return nil, false, fmt.Errorf("%s: not an argocd-cm: the document is not a map; %s", path, argocdCMExpected)
	}
	if _, has := m["apiVersion"]; has {
		return nil, false, nil
	}
	if _, has := m["kind"]; has {
		return nil, false, nil
	}
	// Through JSON, as every other document is read (sigs.k8s.io/yaml), so values come out the same.
	body, err := goyaml.Marshal(m)
	if err == nil {
		err = yaml.Unmarshal(body, &patch)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return patch, true, nil
}

// helmValues reports whether a document looks like values of the argo-helm argo-cd chart, whose
// configs.cm becomes argocd-cm (or of any chart: top-level keys the chart's values.yaml has).
func helmValues(doc map[string]any) bool {
	if configs, ok := doc["configs"].(map[string]any); ok {
		if _, ok := configs["cm"]; ok {
			return true
		}
	}
	for _, k := range []string{"global", "controller", "server", "repoServer", "crds"} {
		if _, ok := doc[k]; ok {
			return true
		}
	}
	return false
}

// pathError is err without the Go call it came from ("stat x: no such file" is "no such file").
func pathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// patchData is the data of a merge patch for argocd-cm: the patch `generate --format patch` writes has
// data and nothing else.
func patchData(path string, patch map[string]any) (map[string]string, error) {
	raw, ok := patch["data"]
	if !ok {
		if helmValues(patch) {
			return nil, fmt.Errorf("%s: not an argocd-cm: these are Helm values of the argo-cd chart (configs.cm); pass the ConfigMap the chart renders "+
				"(helm template argo-cd argo/argo-cd -f %s --show-only templates/argocd-configs/argocd-cm.yaml, or kubectl get configmap argocd-cm -n argocd -o yaml), "+
				"or the merge patch `generate --format patch` writes", path, path)
		}
		return nil, fmt.Errorf("%s: not an argocd-cm: the document has no apiVersion and kind, and no data; %s", path, argocdCMExpected)
	}
	for k := range patch {
		if k != "data" && k != "metadata" {
			return nil, fmt.Errorf("%s: not an argocd-cm merge patch: unexpected top-level key %q; %s", path, k, argocdCMExpected)
		}
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not an argocd-cm merge patch: data is not a map; %s", path, argocdCMExpected)
	}
	data := map[string]string{}
	for k, v := range m {
		switch v := v.(type) {
		case string:
			data[k] = v
		case nil:
			return nil, fmt.Errorf("%s: data.%s is null: this merge patch deletes keys (generate --format patch --remove) and holds no scripts; pass the argocd-cm ConfigMap or the installing patch", path, k)
		default:
			return nil, fmt.Errorf("%s: data.%s is not a string (ConfigMap values must be quoted)", path, k)
		}
	}
	return data, nil
}
