// Package corpus finds the Argo Rollouts objects (Rollout, AnalysisRun, Experiment) in upstream repository
// files — Argo Rollouts' examples, e2e inputs and test data, Argo CD's built-in health and action suites —
// for the corpus proofs, which evaluate every one of them and compare with Argo CD's built-in scripts and
// with kubectl-argo-rollouts. The files are read where they are, in the Go module cache
// (internal/upstream.ModuleDir); nothing is copied.
package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Kinds are the kinds the corpus collects, all in group argoproj.io.
var Kinds = []string{"Rollout", "AnalysisRun", "Experiment"}

// Object is one object found in a file.
type Object struct {
	// File is the slash-separated path relative to the scanned root; Doc the 1-based document (or List
	// item) in it.
	File string
	Doc  int
	// Item is the 1-based position in a kind: List document, 0 for a plain object.
	Item int
	Kind string
	Name string
	// Raw is the object as JSON, Obj the same decoded as Argo CD hands it to Lua (JSON numbers as float64
	// or int64 as sigs.k8s.io/yaml gives them).
	Raw []byte
	Obj map[string]any
}

// ID names the object in reports: file#doc.
func (o Object) ID() string {
	if o.Item > 0 {
		return fmt.Sprintf("%s#%d.%d", o.File, o.Doc, o.Item)
	}
	return fmt.Sprintf("%s#%d", o.File, o.Doc)
}

var mentionsKind = regexp.MustCompile(`(?m)(^\s*kind:\s*["']?(Rollout|AnalysisRun|Experiment)["']?\s*$)|("kind"\s*:\s*"(Rollout|AnalysisRun|Experiment)")`)

// Unreadable is a document that mentions one of the kinds but is not valid YAML or JSON.
type Unreadable struct {
	File string
	Doc  int
	Err  error
}

func (u Unreadable) Error() string { return fmt.Sprintf("%s (document %d): %v", u.File, u.Doc, u.Err) }

// Scan walks root and returns every argoproj.io Rollout, AnalysisRun and Experiment in its .yaml, .yml and
// .json files, in file order. skip, if not nil, is asked for each file (slash path relative to root)
// first. Documents that mention one of the kinds but cannot be read are returned as Unreadable, so an
// object is never silently left out.
func Scan(root string, skip func(rel string) bool) ([]Object, []Unreadable, error) {
	var out []Object
	var bad []Unreadable
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		switch strings.ToLower(path.Ext(p)) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if skip != nil && skip(rel) {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		objs, unreadable := Parse(rel, raw)
		out = append(out, objs...)
		bad = append(bad, unreadable...)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, bad, nil
}

// Parse returns the objects of our kinds in one file's content (multi-document YAML, JSON, kind: List),
// and the documents that mention one of the kinds but cannot be read.
func Parse(file string, raw []byte) ([]Object, []Unreadable) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var out []Object
	var bad []Unreadable
	for doc := 1; ; doc++ {
		chunk, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if mentionsKind.Match(raw) {
				bad = append(bad, Unreadable{file, doc, err})
			}
			break
		}
		if len(bytes.TrimSpace(chunk)) == 0 {
			doc--
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal(chunk, &obj); err != nil {
			if mentionsKind.Match(chunk) {
				bad = append(bad, Unreadable{file, doc, err})
			}
			continue
		}
		if obj == nil {
			doc--
			continue
		}
		items := []map[string]any{obj}
		isList := false
		if k, _ := obj["kind"].(string); strings.HasSuffix(k, "List") {
			isList = true
			items = nil
			list, _ := obj["items"].([]any)
			for _, it := range list {
				if m, ok := it.(map[string]any); ok {
					items = append(items, m)
				}
			}
		}
		for i, it := range items {
			kind, _ := it["kind"].(string)
			apiVersion, _ := it["apiVersion"].(string)
			if !strings.HasPrefix(apiVersion, "argoproj.io/") || !isKind(kind) {
				continue
			}
			j, err := json.Marshal(it)
			if err != nil {
				bad = append(bad, Unreadable{file, doc, err})
				continue
			}
			meta, _ := it["metadata"].(map[string]any)
			name, _ := meta["name"].(string)
			if name == "" {
				name, _ = meta["generateName"].(string)
			}
			item := 0
			if isList {
				item = i + 1
			}
			out = append(out, Object{File: file, Doc: doc, Item: item, Kind: kind, Name: name, Raw: j, Obj: it})
		}
	}
	return out, bad
}

func isKind(k string) bool {
	for _, x := range Kinds {
		if k == x {
			return true
		}
	}
	return false
}
