package main_test

import (
	"os/exec"
	"strings"
	"testing"
)

// `make build` builds the plugin as the release does, statically linked: a cgo build (the go command's
// default where a C toolchain is installed) cannot start in the Rollouts controller's image, and
// `generate --format kargo --plugin-file` refuses it (generator.CheckPluginBinary).
func TestMakeBuildPluginIsStatic(t *testing.T) {
	out, err := exec.Command("make", "-C", "../..", "-n", "build").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n build: %v\n%s", err, out)
	}
	var line string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "./cmd/rollouts-plugin-metric-analysis-health") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("make build does not build the plugin:\n%s", out)
	}
	if !strings.HasPrefix(line, "CGO_ENABLED=0 ") {
		t.Errorf("make build builds the plugin without CGO_ENABLED=0: %s", line)
	}
}
