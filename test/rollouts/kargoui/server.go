package kargoui

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Server is Kargo's API server serving the built UI (the program of test/kargo-v1.11/cmd/kargo-api-ui),
// a subprocess on 127.0.0.1 with the admin account enabled as Kargo's chart enables it
// (templates/api/configmap.yaml and secret.yaml: ADMIN_ACCOUNT_*), under a password chosen here.
type Server struct {
	// URL is where the UI is, http://127.0.0.1:PORT.
	URL string
	// Password is the admin account's.
	Password string
	// Log is the program's stderr (Kargo's own log).
	Log string

	cmd  *exec.Cmd
	dir  string
	done chan error
}

// KargoNamespace is where Kargo runs (KARGO_NAMESPACE), as in the live suite.
const KargoNamespace = "kargo"

// StartServer starts the program with the UI folder ui against the cluster of kubeconfig, on a free
// port, and returns once it listens.
func StartServer(program, ui, kubeconfig string) (*Server, error) {
	dir, err := os.MkdirTemp("", "kargo-api-ui-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, Log: filepath.Join(dir, "kargo-api-ui.log"), done: make(chan error, 1)}
	fail := func(err error) (*Server, error) {
		s.Close()
		return nil, err
	}
	if s.Password, err = randomHex(16); err != nil {
		return fail(err)
	}
	signingKey, err := randomHex(32)
	if err != nil {
		return fail(err)
	}
	// The lowest cost: the hash guards a password that lives as long as the test.
	hash, err := bcrypt.GenerateFromPassword([]byte(s.Password), bcrypt.MinCost)
	if err != nil {
		return fail(err)
	}
	logf, err := os.Create(s.Log)
	if err != nil {
		return fail(err)
	}
	defer logf.Close()
	s.cmd = exec.Command(program, "-ui", ui)
	s.cmd.Stderr = logf
	s.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir,
		"KUBECONFIG=" + kubeconfig, "KARGO_NAMESPACE=" + KargoNamespace, "LOG_LEVEL=info", "PORT=0",
		"ADMIN_ACCOUNT_ENABLED=true", "ADMIN_ACCOUNT_PASSWORD_HASH=" + string(hash),
		// the chart's issuer is the API server's base URL and its audience the host name
		"ADMIN_ACCOUNT_TOKEN_ISSUER=http://127.0.0.1", "ADMIN_ACCOUNT_TOKEN_AUDIENCE=127.0.0.1",
		"ADMIN_ACCOUNT_TOKEN_SIGNING_KEY=" + signingKey,
		// on SIGTERM the server waits this long before it shuts down (pkg/server Serve); 30 s by default
		"GRACEFUL_SHUTDOWN_TIMEOUT=1s",
		// nothing of Kargo reaches an outside host: a proxy that refuses everything but 127.0.0.1
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost"}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	if err := s.cmd.Start(); err != nil {
		return fail(fmt.Errorf("start %s: %w", program, err))
	}
	go func() { s.done <- s.cmd.Wait() }()
	url := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				url <- u
				break
			}
		}
		// the program prints nothing else; keep its stdout drained
		for sc.Scan() {
		}
	}()
	select {
	case s.URL = <-url:
		return s, nil
	case err := <-s.done:
		s.done <- err
		return fail(fmt.Errorf("%s exited before it listened (%v): %s", program, err, tail(s.Log)))
	case <-time.After(2 * time.Minute):
		return fail(fmt.Errorf("%s did not listen within 2 minutes: %s", program, tail(s.Log)))
	}
}

// Close stops the program (SIGTERM, as a Pod's stop) and removes its files.
func (s *Server) Close() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	_ = os.RemoveAll(s.dir)
}

// LogTail is the end of the program's log, for a failure's message.
func (s *Server) LogTail() string { return tail(s.Log) }

func tail(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	const n = 3000
	if len(raw) > n {
		raw = raw[len(raw)-n:]
	}
	return string(raw)
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
