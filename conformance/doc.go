// Package conformance holds the tests that run our scripts through Argo CD's own code.
package conformance
