package cli_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 57 #6: `generate --format kargo --plugin-file` with /bin/ls whose PT_INTERP p_filesz says 2^62
// bytes panicked; it is one error line naming the file, exit 1, and no output folder.
func TestGenerateKargoPluginFileCorruptELF(t *testing.T) {
	bin, err := os.ReadFile("/bin/ls")
	if err != nil {
		t.Skipf("no /bin/ls to patch: %v", err)
	}
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil || f.Class != elf.ELFCLASS64 || f.ByteOrder != binary.LittleEndian {
		t.Skip("/bin/ls is not a little-endian ELF64 executable")
	}
	patched := false
	for i, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			h := int(binary.LittleEndian.Uint64(bin[32:])) + i*int(binary.LittleEndian.Uint16(bin[54:]))
			binary.LittleEndian.PutUint64(bin[h+32:], 1<<62) // p_filesz
			patched = true
		}
	}
	if !patched {
		t.Skip("/bin/ls has no PT_INTERP")
	}
	plugin := filepath.Join(t.TempDir(), "plugin")
	if err := os.WriteFile(plugin, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "kargo")
	code, stdout, stderr := run("generate", "--format", "kargo", "--rollouts-values", "none", "--plugin-location", "https://example.com/p", "--plugin-file", plugin, "--out", out)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "--plugin-file "+plugin) || !strings.Contains(stderr, "PT_INTERP") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line naming --plugin-file %s and the header", code, stdout, stderr, plugin)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the output folder was written")
	}
}
