package cli_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// linuxELF is a minimal x86-64 Linux executable header: one PT_LOAD, and a PT_INTERP naming interp
// when interp is not empty, as a dynamically linked build has (cgo, the default `go build` where a C
// toolchain is installed).
func linuxELF(interp string) []byte {
	type prog struct {
		typ  uint32
		data []byte
	}
	progs := []prog{{typ: 1}}
	if interp != "" {
		progs = append(progs, prog{typ: 3, data: append([]byte(interp), 0)})
	}
	const ehsize, phsize = 64, 56
	le := binary.LittleEndian
	b := make([]byte, ehsize+phsize*len(progs))
	copy(b, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1})
	le.PutUint16(b[16:], 2)  // ET_EXEC
	le.PutUint16(b[18:], 62) // EM_X86_64
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[32:], ehsize) // e_phoff
	le.PutUint16(b[52:], ehsize)
	le.PutUint16(b[54:], phsize)
	le.PutUint16(b[56:], uint16(len(progs)))
	le.PutUint16(b[58:], 64)
	for i, p := range progs {
		h := b[ehsize+phsize*i:]
		le.PutUint32(h, p.typ)
		le.PutUint64(h[8:], uint64(len(b)))       // p_offset
		le.PutUint64(h[32:], uint64(len(p.data))) // p_filesz
		le.PutUint64(h[40:], uint64(len(p.data))) // p_memsz
		b = append(b, p.data...)
	}
	return b
}

// A plugin the Rollouts controller could not start (dynamically linked, or not a Linux executable) is
// refused by `generate --format kargo --plugin-file`, with the build that works; nothing is written.
func TestGenerateKargoPluginFileMustBeStatic(t *testing.T) {
	for _, tc := range []struct {
		name string
		bin  []byte
		want []string // in stderr; none: accepted
	}{
		{"static", linuxELF(""), nil},
		{"dynamic", linuxELF("/lib64/ld-linux-x86-64.so.2"), []string{"dynamically linked", "/lib64/ld-linux-x86-64.so.2", "make dist", "CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build"}},
		{"not ELF", []byte("#!/bin/sh\necho plugin\n"), []string{"not a Linux executable", "make dist"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "plugin")
			if err := os.WriteFile(bin, tc.bin, 0o755); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "kargo")
			code, stdout, stderr := run("generate", "--format", "kargo", "--rollouts-values", "none", "--plugin-location", "https://example.com/p", "--plugin-file", bin, "--out", out)
			if tc.want == nil {
				if code != 0 {
					t.Fatalf("exit %d %q", code, stderr)
				}
				return
			}
			if code != 1 || stdout != "" || !strings.Contains(stderr, "--plugin-file "+bin) {
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 naming --plugin-file", code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("the output folder was written")
			}
		})
	}
}
