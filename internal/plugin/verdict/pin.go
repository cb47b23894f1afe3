package verdict

import (
	"strings"
)

// Pin is the revision a verification judges, chosen at its first judgement and kept from then on. The
// plugin carries it in the measurement's metadata, which the analysis controller stores in the
// AnalysisRun's status and hands back on every Resume (analysis/analysis.go runMeasurements), so it
// survives a restart of the controller or of the plugin.
type Pin struct {
	// Hash is the revision's pod-template hash; RolloutRevision its revision number, Images the images of
	// its pod template when it was chosen.
	Hash            string
	RolloutRevision string
	Images          []string
	// Promoted records that a judgement saw the revision fully promoted (stable and current): replaced
	// later, it was not rolled back before it was released.
	Promoted bool
}

// Metadata keys of a measurement that hold a Pin.
const (
	MetadataRevision        = "revision"
	MetadataRolloutRevision = "rolloutRevision"
	MetadataImages          = "images"
	MetadataPromoted        = "promoted"
)

// Metadata renders the pin as measurement metadata.
func (p *Pin) Metadata() map[string]string {
	if p == nil || p.Hash == "" {
		return nil
	}
	m := map[string]string{MetadataRevision: p.Hash}
	if p.RolloutRevision != "" {
		m[MetadataRolloutRevision] = p.RolloutRevision
	}
	if len(p.Images) > 0 {
		m[MetadataImages] = strings.Join(p.Images, ",")
	}
	if p.Promoted {
		m[MetadataPromoted] = "true"
	}
	return m
}

// PinFromMetadata reads a pin back from measurement metadata; nil if it holds none.
func PinFromMetadata(m map[string]string) *Pin {
	if m[MetadataRevision] == "" {
		return nil
	}
	p := &Pin{Hash: m[MetadataRevision], RolloutRevision: m[MetadataRolloutRevision], Promoted: m[MetadataPromoted] == "true"}
	if s := m[MetadataImages]; s != "" {
		p.Images = strings.Split(s, ",")
	}
	return p
}

func (p *Pin) clone() *Pin {
	if p == nil {
		return nil
	}
	c := *p
	c.Images = append([]string(nil), p.Images...)
	return &c
}
