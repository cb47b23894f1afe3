// Package manifest reads Kubernetes objects from files, folders and standard input: multi-document YAML
// as `helm template` and `kustomize build` print it, JSON, and `kind: List` as `kubectl get -o yaml`
// prints it. Every error names the source and the document.
package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// Object is one decoded object and where it came from.
type Object struct {
	Source string // file path, or "-" for standard input
	Doc    int    // 1-based document index within Source
	Item   int    // 1-based index inside a List, 0 otherwise
	Object map[string]any
}

// Where names the object's origin for error messages: "file.yaml (document 2, item 3)".
func (o Object) Where() string {
	s := fmt.Sprintf("%s (document %d", o.Source, o.Doc)
	if o.Item > 0 {
		s += fmt.Sprintf(", item %d", o.Item)
	}
	return s + ")"
}

// APIVersion, Kind, Namespace and Name read the identifying fields; they are empty when absent.
func (o Object) APIVersion() string { return str(o.Object["apiVersion"]) }
func (o Object) Kind() string       { return str(o.Object["kind"]) }
func (o Object) Name() string       { return str(meta(o.Object)["name"]) }
func (o Object) Namespace() string  { return str(meta(o.Object)["namespace"]) }

// Group is the API group of apiVersion ("" for core).
func (o Object) Group() string {
	if i := strings.Index(o.APIVersion(), "/"); i >= 0 {
		return o.APIVersion()[:i]
	}
	return ""
}

func meta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	return m
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Read loads every object from the given paths; "-" reads stdin. Folders are walked for .yaml, .yml and
// .json files in lexical order.
func Read(paths []string, stdin io.Reader) ([]Object, error) {
	var out []Object
	for _, p := range paths {
		if p == "-" {
			raw, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("-: %w", err)
			}
			objs, err := Decode("-", raw)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
			continue
		}
		files, err := expand(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			objs, err := Decode(f, raw)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

func expand(p string) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(f string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(f)) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, f)
			}
		}
		return nil
	})
	sort.Strings(files)
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("%s: no .yaml, .yml or .json files", p)
	}
	return files, err
}

// Decode splits raw into documents and decodes each; empty documents are skipped, a `kind: List` (or any
// kind ending in List with items) is flattened.
func Decode(source string, raw []byte) ([]Object, error) {
	reader := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var out []Object
	for doc := 1; ; doc++ {
		chunk, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s (document %d): %w", source, doc, err)
		}
		if len(bytes.TrimSpace(stripComments(chunk))) == 0 {
			continue
		}
		var obj map[string]any
		if err := sigsyaml.Unmarshal(chunk, &obj); err != nil {
			return nil, fmt.Errorf("%s (document %d): %w", source, doc, err)
		}
		if obj == nil {
			continue
		}
		o := Object{Source: source, Doc: doc, Object: obj}
		if items, isList := obj["items"]; isList && strings.HasSuffix(o.Kind(), "List") {
			list, ok := items.([]any)
			if !ok && items != nil {
				return nil, fmt.Errorf("%s: items is not a list", o.Where())
			}
			for i, it := range list {
				m, ok := it.(map[string]any)
				item := Object{Source: source, Doc: doc, Item: i + 1, Object: m}
				if !ok {
					return nil, fmt.Errorf("%s: item is not an object", item.Where())
				}
				if err := item.validate(); err != nil {
					return nil, err
				}
				out = append(out, item)
			}
			continue
		}
		if err := o.validate(); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func (o Object) validate() error {
	var missing []string
	if _, ok := o.Object["apiVersion"].(string); !ok || o.APIVersion() == "" {
		missing = append(missing, "apiVersion")
	}
	if _, ok := o.Object["kind"].(string); !ok || o.Kind() == "" {
		missing = append(missing, "kind")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: not a Kubernetes object: missing or non-string %s", o.Where(), strings.Join(missing, " and "))
	}
	if m, ok := o.Object["metadata"]; ok && m != nil {
		if _, ok := m.(map[string]any); !ok {
			return fmt.Errorf("%s: metadata is not an object", o.Where())
		}
	}
	return nil
}

func stripComments(chunk []byte) []byte {
	var b bytes.Buffer
	for _, line := range bytes.Split(chunk, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' || string(t) == "---" {
			continue
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
