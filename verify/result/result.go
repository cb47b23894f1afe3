// Package result holds the values Argo CD's Lua scripts give back, as plain data: a health script's
// Health, a discovery script's Actions. Package verify and the engine behind it share them, so that a
// user's module can name what verify's suites and results hold (verify.Health, verify.Action are these).
package result

// Health is a health script's result, Argo CD's HealthStatus as its health_test.yaml suites spell it.
type Health struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	// DeletionMessage is what a v3.6 script reports for an object being deleted; gitops-engine v3.6
	// then records Status with this message instead of "Pending deletion". Earlier releases have no such
	// field and ignore it, so it is only ever set under Argo CD v3.6.
	DeletionMessage string `json:"deletionMessage,omitempty"`
}

// Action is one entry of a discovery result, Argo CD's v1alpha1.ResourceAction.
type Action struct {
	Name     string `json:"name"`
	Disabled bool   `json:"disabled"`
	// DisplayName is what Argo CD's UI shows in the actions menu instead of the name.
	DisplayName string        `json:"displayName,omitempty"`
	IconClass   string        `json:"iconClass,omitempty"`
	Params      []ActionParam `json:"params,omitempty"`
}

// ActionParam is Argo CD's v1alpha1.ResourceActionParam. v3 keeps only Name; v2 also has Value, Type and
// Default, so under the v3 profiles those stay empty whatever the script returns.
type ActionParam struct {
	Name    string `json:"name,omitempty"`
	Value   string `json:"value,omitempty"`
	Type    string `json:"type,omitempty"`
	Default string `json:"default,omitempty"`
}
