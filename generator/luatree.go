package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"gopkg.in/yaml.v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

const (
	healthTestFile = "health_test.yaml"
	verifyHint     = "Run these tests with: analysis-health verify DIR"
)

// renderLuaTree copies, per kind, health.lua (options applied), health_test.yaml and everything under
// testdata/, so that `analysis-health verify DIR` (and Argo CD's own TestLuaHealthScript layout) runs on
// the result.
func renderLuaTree(r resolved) ([]File, error) {
	var files []File
	for _, k := range r.kinds {
		dir := path.Join(k.Group, k.Kind)
		s, err := script(k, r)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: path.Join(dir, "health.lua"), Data: []byte(s)})

		err = fs.WalkDir(lua.FS, path.Join(dir, "testdata"), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			raw, err := lua.FS.ReadFile(p)
			if err != nil {
				return err
			}
			files = append(files, File{Path: p, Data: raw})
			return nil
		})
		if err != nil && !isNotExist(err) {
			return nil, err
		}

		suitePath := path.Join(dir, healthTestFile)
		raw, err := lua.FS.ReadFile(suitePath)
		if isNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := checkInputPaths(dir, raw, files); err != nil {
			return nil, fmt.Errorf("%s: %w", suitePath, err)
		}
		if r.inconclusive == InconclusiveSuspended {
			// The bundled expectations hold for the bundled script: copied byte for byte under the header.
			files = append(files, File{Path: suitePath, Data: append([]byte(r.header(Lua, verifyHint)), raw...)})
			continue
		}
		derived, err := deriveSuite(k, r, raw, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", suitePath, err)
		}
		files = append(files, File{Path: suitePath, Data: derived})
	}
	return files, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// checkInputPaths makes sure every fixture the suite names is inside the kind folder and was copied, so the
// generated tree is complete on its own.
func checkInputPaths(dir string, raw []byte, files []File) error {
	var suite verify.HealthSuite
	if err := sigsyaml.UnmarshalStrict(raw, &suite); err != nil {
		return err
	}
	have := map[string]bool{}
	for _, f := range files {
		have[f.Path] = true
	}
	for i, tc := range suite.Tests {
		p := path.Join(dir, tc.InputPath)
		if !strings.HasPrefix(p, dir+"/") || !have[p] {
			return fmt.Errorf("tests[%d]: inputPath %s is not a file under %s/testdata", i, tc.InputPath, dir)
		}
	}
	return nil
}

// deriveSuite rewrites a health_test.yaml for non-default options. Argo CD's format has no notion of
// options, and the bundled expectations describe the default script, so each case is re-evaluated:
//
//   - the bundled script must still meet the bundled expectation, else the suite is broken and nothing
//     trustworthy can be derived from it;
//   - the optioned script may differ from it only by reporting the chosen inconclusive status (the one
//     thing the option is documented to change); anything else is an error, not a new expectation.
//
// Changed cases carry a comment with the bundled expectation, so the difference is reviewable. The
// conformance tests check the derived expectations against Argo CD's own evaluation.
func deriveSuite(k lua.Kind, r resolved, raw []byte, optioned string) ([]byte, error) {
	var suite verify.HealthSuite
	if err := sigsyaml.UnmarshalStrict(raw, &suite); err != nil {
		return nil, err
	}
	bundled, err := lua.Health(k.Group, k.Kind)
	if err != nil {
		return nil, err
	}
	dir := path.Join(k.Group, k.Kind)
	// The argocd-cm sandbox (no open libraries), where these scripts run in Argo CD.
	eng := engine.Engine{Profile: engine.V2}
	tests := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for i, tc := range suite.Tests {
		obj, err := verify.LoadObject(lua.FS, path.Join(dir, tc.InputPath))
		if err != nil {
			return nil, fmt.Errorf("tests[%d]: %w", i, err)
		}
		def, err := eng.Health(obj, bundled)
		if err != nil {
			return nil, fmt.Errorf("tests[%d] (%s): bundled script: %w", i, tc.InputPath, err)
		}
		if def != tc.HealthStatus {
			return nil, fmt.Errorf("tests[%d] (%s): the bundled suite fails (want %s %q, got %s %q); fix it before generating with other options",
				i, tc.InputPath, tc.HealthStatus.Status, tc.HealthStatus.Message, def.Status, def.Message)
		}
		got, err := eng.Health(obj, optioned)
		if err != nil {
			return nil, fmt.Errorf("tests[%d] (%s): script with options: %w", i, tc.InputPath, err)
		}
		item := mapping(
			"healthStatus", mapping("status", str(got.Status), "message", str(got.Message)),
			"inputPath", str(tc.InputPath),
		)
		if got != def {
			if got.Status != r.inconclusive {
				return nil, fmt.Errorf("tests[%d] (%s): --inconclusive %s changed %s %q into %s %q; it may only change the status to %s",
					i, tc.InputPath, strings.ToLower(r.inconclusive), def.Status, def.Message, got.Status, got.Message, r.inconclusive)
			}
			item.HeadComment = fmt.Sprintf("changed by --inconclusive %s; bundled expectation: %s %q", strings.ToLower(r.inconclusive), def.Status, def.Message)
		}
		tests.Content = append(tests.Content, item)
	}
	return encode(r.header(Lua, verifyHint,
		"Expectations re-evaluated for these options from the bundled suite; changed cases are marked.",
	), mapping("tests", tests), nil)
}
