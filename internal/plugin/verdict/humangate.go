package verdict

import (
	"strings"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
)

// humanGateMessage is the Rollout's health message by the Rollout script with the humanGate = "Healthy"
// option (generate --human-gate healthy), when that option would make the Rollout Healthy: paused where
// only a person resumes it, after every analysis so far passed. Empty otherwise.
//
// The verdict itself never takes the option: it is decided with the default script and full promotion,
// so the verification of that Freight stays Running until the person promotes it, whatever argocd-cm
// holds. Only the message is the option's, so the person reading Kargo's Verification tab sees why it
// runs, in the words Argo CD shows with the option installed.
func humanGateMessage(e engine.Engine, ro map[string]any) (string, error) {
	src, err := lua.Health("argoproj.io", "Rollout")
	if err != nil {
		return "", err
	}
	if src, err = lua.SetOptions(src, map[string]any{"humanGate": "Healthy"}); err != nil {
		return "", err
	}
	h, err := e.Health(ro, src)
	if err != nil || h.Status != engine.Healthy || !strings.HasPrefix(h.Message, lua.HumanGateMessage) {
		return "", err
	}
	return h.Message, nil
}
