package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/verify"
)

// verifyOnly is a release whose own tree `verify` is held to, beside the two the upstream format is
// written for (TestArgoCDOwnTests holds verify to those on their overlaid trees).
var verifyOnly = tree{"github.com/argoproj/argo-cd/v3", "v3.2.12", "local", true}

// The two suites of util/lua that read resource_customizations' test files.
const argoSuites = "^(TestLuaHealthScript|TestLuaResourceActionsScript)$"

// TestVerifyPassesWhatArgoCDPasses: `analysis-health verify` passes every case of Argo CD v3.2.12's own
// resource_customizations that Argo CD's own TestLuaHealthScript and TestLuaResourceActionsScript pass,
// run in the release's pristine tree, and runs every case they run.
func TestVerifyPassesWhatArgoCDPasses(t *testing.T) {
	tr := verifyOnly
	work := filepath.Join(os.TempDir(), "analysis-health-upstream", "argo-cd@"+tr.version)
	if err := os.RemoveAll(work); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	copyTree(t, tr.dir(t), work)
	fillLocalReplaces(t, work, tr)
	checkVerify(t, tr, work, runArgoTests(t, tr, work, argoSuites))
}

// argoCase is one subtest of Argo CD's two suites, placed so that verify's result for it can be found.
type argoCase struct {
	name                     string // the subtest's name as go test reports it
	dir, role, action, input string
}

// checkVerify runs verify on the tree at work with the release's profile (health with open libraries, as
// TestLuaHealthScript runs them; discovery and actions without, as Argo CD runs them) and compares it
// case by case with what Argo CD's own tests reported in res.
func checkVerify(t *testing.T, tr tree, work string, res testRun) {
	t.Helper()
	root := filepath.Join(work, "resource_customizations")
	p, err := engine.ParseProfile(tr.version)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := verify.Runner{Engine: verify.Engine{Profile: verify.Profile(p), OpenLibs: true, Timeout: 30 * time.Second}}.Tree(os.DirFS(root), ".")
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]verify.Result{}
	seen := map[string]int{}
	for _, r := range rep.Results {
		// The suite's folder, as Argo CD's walk finds it: <group>/<Kind> or <group>/<Kind>/actions.
		k := caseKey(filepath.Dir(filepath.FromSlash(r.Suite)), r.Role, r.Action, r.Input)
		seen[k]++
		ours[fmt.Sprintf("%s#%d", k, seen[k])] = r
	}
	cases := argoCases(t, root, tr)
	argoPassed, matched := 0, map[string]bool{}
	seen = map[string]int{}
	for _, c := range cases {
		k := caseKey(c.dir, c.role, c.action, c.input)
		seen[k]++
		k = fmt.Sprintf("%s#%d", k, seen[k])
		r, ok := ours[k]
		if !res.passed[c.name] {
			continue
		}
		argoPassed++
		switch {
		case !ok:
			t.Errorf("%s: Argo CD's own test passes it, verify did not run it", c.name)
		case !r.Passed():
			t.Errorf("%s: Argo CD's own test passes it, verify: %s%s", c.name, r.Failure, r.NotRun)
		}
		matched[k] = true
	}
	notRun := 0
	for k, r := range ours {
		if matched[k] {
			continue
		}
		if r.NotRun != "" {
			notRun++ // Argo CD's test does not run it either (its walk finds no script)
			continue
		}
		t.Errorf("verify ran %s (%s: %s), which Argo CD's own tests do not pass", k, r.Suite, r.Case)
	}
	passed, failed := rep.Counts()
	t.Logf("Argo CD %s: its own tests pass %d cases of resource_customizations; verify passes %d, fails %d, does not run %d (nor does Argo CD)",
		tr.version, argoPassed, passed, failed, notRun)
	if argoPassed == 0 || len(cases) != argoPassed {
		t.Errorf("%d of Argo CD's %d cases passed", argoPassed, len(cases))
	}
}

func caseKey(dir, role, action, input string) string {
	return filepath.ToSlash(filepath.Clean(dir)) + "|" + role + "|" + action + "|" + filepath.ToSlash(filepath.Clean(input))
}

// argoCases lists the subtests of TestLuaHealthScript and TestLuaResourceActionsScript in the order the
// release runs them (filepath.Walk over resource_customizations) and with the names go test gives them:
// t.Run's name with spaces as underscores, and #01, #02... on a name already used in the same test.
func argoCases(t *testing.T, root string, tr tree) []argoCase {
	t.Helper()
	var out []argoCase
	used := map[string]int{}
	name := func(top, sub string) string {
		n := top + "/" + strings.ReplaceAll(sub, " ", "_")
		used[n]++
		if used[n] > 1 {
			n = fmt.Sprintf("%s#%02d", n, used[n]-1)
		}
		return n
	}
	var health, actions []string
	err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		// The releases' own filters (util/lua health_test.go, custom_actions_test.go).
		if strings.Contains(p, "health.lua") {
			health = append(health, p)
		}
		if strings.Contains(p, "action_test.yaml") {
			actions = append(actions, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range health {
		dir := filepath.Dir(p)
		var suite struct {
			Tests []struct {
				InputPath string `json:"inputPath"`
			} `json:"tests"`
		}
		readYAML(t, filepath.Join(dir, "health_test.yaml"), &suite)
		rel, _ := filepath.Rel(root, dir)
		for _, c := range suite.Tests {
			sub := c.InputPath
			if tr.kindInName {
				sub = filepath.Join(rel, c.InputPath)
			}
			out = append(out, argoCase{name: name("TestLuaHealthScript", sub), dir: rel, role: "health", input: c.InputPath})
		}
	}
	for _, p := range actions {
		var suite struct {
			DiscoveryTests []struct {
				InputPath string `json:"inputPath"`
			} `json:"discoveryTests"`
			ActionTests []struct {
				Action    string `json:"action"`
				InputPath string `json:"inputPath"`
			} `json:"actionTests"`
		}
		readYAML(t, p, &suite)
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, c := range suite.DiscoveryTests {
			out = append(out, argoCase{name: name("TestLuaResourceActionsScript", "discovery/"+c.InputPath), dir: rel, role: "discovery", input: c.InputPath})
		}
		for _, c := range suite.ActionTests {
			out = append(out, argoCase{name: name("TestLuaResourceActionsScript", fmt.Sprintf("actions/%s/%s", c.Action, c.InputPath)), dir: rel, role: "action", action: c.Action, input: c.InputPath})
		}
	}
	return out
}

func readYAML(t *testing.T, p string, v any) {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
}
