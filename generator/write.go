package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// rename is os.Rename; tests replace it to prove a failed final step leaves nothing behind.
var rename = os.Rename

// WriteFile writes data to file atomically: into a temporary file in the same folder, then renamed over
// file, so readers (and a failed run) never see a partial file. The folder must exist.
func WriteFile(file string, data []byte) (err error) {
	if err := checkParent(file); err != nil {
		return err
	}
	if info, err := os.Stat(file); err == nil && info.IsDir() {
		return fmt.Errorf("%s is a directory; give a file name", file)
	}
	tmp, err := createTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp-")
	if err != nil {
		return fmt.Errorf("cannot write to %s: %w", filepath.Dir(file), err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := rename(tmp.Name(), file); err != nil {
		return fmt.Errorf("cannot write %s: %w", file, err)
	}
	return nil
}

// WriteDir writes files into the folder dir atomically: into a temporary folder beside it, then renamed to
// dir. dir must not exist or be empty: replacing a folder with content could delete files this command did
// not write, so that is left to the user.
func WriteDir(dir string, files []File) (err error) {
	// "out/" names the folder out, not a folder inside it (filepath.Dir would say "out").
	dir = filepath.Clean(dir)
	if err := checkParent(dir); err != nil {
		return err
	}
	for _, f := range files {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return fmt.Errorf("refusing to write %q outside %s", f.Path, dir)
		}
	}
	existed := false
	if info, err := os.Stat(dir); err == nil {
		existed = true
		if !info.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", dir)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		if len(entries) > 0 {
			return fmt.Errorf("%s exists and is not empty; remove it or choose another --out", dir)
		}
	}
	tmp, err := mkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("cannot write to %s: %w", filepath.Dir(dir), err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	for _, f := range files {
		p := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o666); err != nil {
			return err
		}
	}
	// An empty dir is removed first: rename(2) would replace it on Linux, but not on every platform.
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot replace %s: %w", dir, err)
	}
	if err := rename(tmp, dir); err != nil {
		if existed {
			os.Mkdir(dir, 0o777) // put back the empty folder the user had
		}
		return fmt.Errorf("cannot write %s: %w", dir, err)
	}
	return nil
}

// The temporary file and folder are made as any other file a program creates, 0666 and 0777 less the
// umask: os.CreateTemp and os.MkdirTemp make them 0600 and 0700 (fit for secrets), and a fixed chmod
// afterwards would ignore the umask of a user who keeps their files private.

func createTemp(dir, prefix string) (*os.File, error) {
	for try := 0; ; try++ {
		f, err := os.OpenFile(tempName(dir, prefix), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}

func mkdirTemp(dir, prefix string) (string, error) {
	for try := 0; ; try++ {
		name := tempName(dir, prefix)
		err := os.Mkdir(name, 0o777)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return name, err
	}
}

func tempName(dir, prefix string) string {
	return filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
}

// checkParent fails early and clearly when the output's folder is missing, instead of with the
// temporary file's name.
func checkParent(p string) error {
	parent := filepath.Dir(p)
	info, err := os.Stat(parent)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot write %s: folder %s does not exist", p, parent)
	case err != nil:
		return fmt.Errorf("cannot write %s: %w", p, err)
	case !info.IsDir():
		return fmt.Errorf("cannot write %s: %s is not a folder", p, parent)
	}
	return nil
}
