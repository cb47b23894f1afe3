package generator

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// realELF is /bin/ls and the file offset of its PT_INTERP program header: a real dynamically linked
// executable to patch, as a corrupt or hostile --plugin-file would be.
func realELF(t *testing.T) ([]byte, int) {
	t.Helper()
	bin, err := os.ReadFile("/bin/ls")
	if err != nil {
		t.Skipf("no /bin/ls to patch: %v", err)
	}
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil || f.Class != elf.ELFCLASS64 || f.ByteOrder != binary.LittleEndian {
		t.Skipf("/bin/ls is not a little-endian ELF64 executable")
	}
	phoff := binary.LittleEndian.Uint64(bin[32:])
	phentsize := binary.LittleEndian.Uint16(bin[54:])
	for i, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return bin, int(phoff) + i*int(phentsize)
		}
	}
	t.Skip("/bin/ls has no PT_INTERP")
	return nil, 0
}

// Issue 57 #6: CheckPluginBinary trusted the program header's sizes: a PT_INTERP whose p_filesz says
// 2^62 bytes made it panic (makeslice: len out of range), one of a few GiB allocate them. A header is
// checked against the file's own size before anything is read: a corrupt one is an error naming the
// header and the sizes, never a panic or an allocation the file does not justify.
func TestCheckPluginBinaryCorruptHeaders(t *testing.T) {
	bin, interp := realELF(t)
	const offset, filesz = 8, 32 // of p_offset and p_filesz in an ELF64 program header
	patch := func(field int, v uint64) []byte {
		b := bytes.Clone(bin)
		binary.LittleEndian.PutUint64(b[interp+field:], v)
		return b
	}
	for _, tc := range []struct {
		name string
		bin  []byte
		want string
	}{
		{"p_filesz 2^62", patch(filesz, 1<<62), "PT_INTERP"},
		{"p_filesz 16 GiB", patch(filesz, 16<<30), "PT_INTERP"},
		{"p_filesz one past the end", patch(filesz, uint64(len(bin))), "PT_INTERP"},
		{"p_filesz all ones", patch(filesz, ^uint64(0)), "invalid program header file size"},
		{"p_offset beyond the end", patch(offset, uint64(len(bin))+1), "PT_INTERP"},
		{"p_offset negative", patch(offset, ^uint64(0)-15), "invalid program header offset"},
		{"truncated in the interpreter", bin[:interpEnd(t, bin, interp)-3], "not a Linux executable"},
		{"truncated in the program headers", bin[:interp+4], "not a Linux executable"},
		{"truncated to the ELF header", bin[:64], "not a Linux executable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				err = CheckPluginBinary(tc.bin)
			}()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want an error naming %q", err, tc.want)
			}
		})
	}
	// the untouched file still says what it needs
	if err := CheckPluginBinary(bin); err == nil || !strings.Contains(err.Error(), "/lib64/ld-linux-x86-64.so.2") && !strings.Contains(err.Error(), "the loader ") {
		t.Errorf("/bin/ls: %v; want it refused as dynamically linked, naming its loader", err)
	}
}

// interpEnd is where the interpreter's path ends in the file.
func interpEnd(t *testing.T, bin []byte, interp int) int {
	t.Helper()
	off := binary.LittleEndian.Uint64(bin[interp+8:])
	size := binary.LittleEndian.Uint64(bin[interp+32:])
	return int(off + size)
}
