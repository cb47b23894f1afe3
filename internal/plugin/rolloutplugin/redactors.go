package rolloutplugin

import (
	"crypto/sha256"
	"sync"

	"github.com/analysis-health/analysis-health/internal/plugin/redact"
)

// A kubeconfig's Redactor (its token, keys and certificate in every form, and their 16-byte runs) takes
// about half a MiB to build for a client key: built once per Secret content and shared by every
// measurement that reads through it, not once a measurement. A renewed token is another content; the
// cache is emptied when it holds maxKubeconfigRedactors, so it never grows with renewals.
const maxKubeconfigRedactors = 64

var kubeconfigRedactors = struct {
	sync.Mutex
	m map[[sha256.Size]byte]*redact.Redactor
}{m: map[[sha256.Size]byte]*redact.Redactor{}}

// kubeconfigRedactor redacts what of a kubeconfig must never be printed (kubeconfigSecrets). The document
// itself is redacted whole, not by its runs: its lines are also the field names the plugin's refusals name.
func kubeconfigRedactor(kubeconfig []byte) *redact.Redactor {
	sum := sha256.Sum256(kubeconfig)
	kubeconfigRedactors.Lock()
	r := kubeconfigRedactors.m[sum]
	kubeconfigRedactors.Unlock()
	if r != nil {
		return r
	}
	r = &redact.Redactor{}
	for _, s := range kubeconfigSecrets(kubeconfig) {
		if s == string(kubeconfig) {
			r.AddWhole(s)
		} else {
			r.Add(s)
		}
	}
	kubeconfigRedactors.Lock()
	defer kubeconfigRedactors.Unlock()
	if len(kubeconfigRedactors.m) >= maxKubeconfigRedactors {
		clear(kubeconfigRedactors.m)
	}
	kubeconfigRedactors.m[sum] = r
	return r
}
