package harness

import (
	"fmt"
	"testing"
)

// SharedEnv is the one Env that the tests of a version module share (each scenario gets a namespace of
// its own). It starts for the first test that asks for it, so a run of the reliability tests alone, which
// start clusters of their own, does not start it; TestMain closes it.
type SharedEnv struct {
	env *Env
	err error
}

// Get starts the Env on first use and fails t if it could not start.
func (s *SharedEnv) Get(t *testing.T) *Env {
	t.Helper()
	if s.env == nil && s.err == nil {
		if s.env, s.err = NewEnv(); s.err != nil {
			s.err = fmt.Errorf("the shared cluster: %w", s.err)
		}
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.env
}

// Close stops the Env if a test started it.
func (s *SharedEnv) Close() {
	if s.env != nil {
		s.env.Close()
	}
}
