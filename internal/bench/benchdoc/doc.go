package benchdoc

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// VMs are the Argo CD generations measured, with their output file under testdata/ and their goal. Name is
// the release the committed file was measured on (test/argocd-v3.6 pins v3.6.2 since; v3.6.txt is
// v3.6.1's): change it with the file when `make bench` re-measures.
var VMs = []struct {
	Name, File, How string
	Goal            Goal
	ParsesEveryCall bool
}{
	{"v2.14.21", "v2.14.txt", "Parses and compiles the script on every evaluation (`util/lua/lua.go` `runLua` → `DoString`), as " +
		"v3.0–v3.5 do. Ours is the generator's **lazy** form (`--argocd-version v2.14`): rare paths in long strings that " +
		"`loadstring` compiles only when reached, comments and indentation dropped, locals renamed.", Goal{Ratio: 0.5, Floor: 2}, true},
	{"v3.6.1", "v3.6.txt", "Compiles each script once and keeps the prototype (`util/lua/lua.go` `compiledScriptCache`, " +
		"1024 entries by source); what `loadstring` compiles at run time is compiled on every call. Ours is the generator's " +
		"**flat** form (`--argocd-version v3.6`): one chunk, every lazily compiled chunk inlined as a function.", Goal{Ratio: 0.8, Floor: 1.15}, false},
}

// Document renders the page from the benchmark output in dir; a VM whose file is missing is shown as not
// measured.
func Document(dir string) (string, error) {
	var vms []VM
	goals := map[string]Goal{}
	for _, v := range VMs {
		goals[v.Name] = v.Goal
		vm := VM{Name: v.Name, How: v.How, ParsesEveryCall: v.ParsesEveryCall, Results: map[string]Result{}}
		f, err := os.Open(filepath.Join(dir, v.File))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return "", err
		default:
			vm.Results, err = Parse(f)
			f.Close()
			if err != nil {
				return "", err
			}
		}
		vms = append(vms, vm)
	}
	return Render(vms, goals) + notes, nil
}
