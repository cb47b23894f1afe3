package generator

import (
	"bytes"
	"debug/elf"
	"fmt"
	"strings"
)

// PluginStaticBuild is the one command that builds the plugin as the Rollouts controller can start it
// (`make dist` builds the same for linux amd64 and arm64).
const PluginStaticBuild = "CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -o rollouts-plugin-metric-analysis-health ./cmd/rollouts-plugin-metric-analysis-health"

// CheckPluginBinary refuses a plugin binary the Rollouts controller could not start: the controller's
// image (quay.io/argoproj/argo-rollouts, distroless static-debian12) has no dynamic loader and no libc, so
// a Linux executable that asks for an interpreter (PT_INTERP) or shared libraries (DT_NEEDED) fails there
// with "no such file or directory", which the user finds out in the cluster. A file that is no ELF
// executable (a macOS build, a script) cannot run there either.
func CheckPluginBinary(bin []byte) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("not a Linux executable (%v): the Rollouts controller runs the plugin on Linux; build it with `make dist`, or `%s`", err, PluginStaticBuild)
	}
	defer f.Close()
	var needs []string
	for i, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		// The header's sizes are the file's word, not facts: checked against the bytes at hand before
		// they are read (an allocation of p_filesz bytes panicked at 2^62 and took GiBs below that).
		// debug/elf rejects offsets and sizes above 2^63 itself.
		size := uint64(len(bin))
		if p.Off > size || p.Filesz > size-p.Off {
			return fmt.Errorf("not a valid Linux executable: program header %d (PT_INTERP) says %d bytes at offset %d, beyond the file's %d bytes", i, p.Filesz, p.Off, size)
		}
		path := strings.TrimRight(string(bin[p.Off:p.Off+p.Filesz]), "\x00")
		if len(path) > 256 { // a loader's path is short; a longer one is quoted cut
			path = path[:256] + "…"
		}
		needs = append(needs, fmt.Sprintf("the loader %q", path))
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		needs = append(needs, "the libraries "+strings.Join(libs, ", "))
	}
	if len(needs) > 0 {
		return fmt.Errorf("dynamically linked (needs %s): the Argo Rollouts image has no libc or loader, so the controller could not start it; build it statically with `make dist` (dist/rollouts-plugin-metric-analysis-health-linux-<arch>), or `%s`",
			strings.Join(needs, " and "), PluginStaticBuild)
	}
	return nil
}
