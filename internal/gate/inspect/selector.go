package inspect

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// TemplateGrammar is the one spelling of a template on every verb's command line (inspect and hooks
// --known-template, hooks --template): the form inspect prints (KIND/NAME), a namespaced one, or a bare
// name.
const TemplateGrammar = "[AnalysisTemplate/|ClusterAnalysisTemplate/][NAMESPACE/]NAME"

// TemplateSelector names analysis templates: Kind and Namespace narrow the match when set.
type TemplateSelector struct {
	Kind, Namespace, Name string
}

// ParseTemplateSelector reads TemplateGrammar. The kind is told from a namespace by its case: namespaces
// are lower-case DNS labels, kinds are not.
func ParseTemplateSelector(s string) (TemplateSelector, error) {
	parts := strings.Split(s, "/")
	var sel TemplateSelector
	if len(parts) > 1 && (parts[0] == KindTemplate || parts[0] == KindClusterTmpl) {
		sel.Kind, parts = parts[0], parts[1:]
	}
	bad := func(why string) (TemplateSelector, error) {
		return TemplateSelector{}, fmt.Errorf("template %q: %s; want %s", s, why, TemplateGrammar)
	}
	switch len(parts) {
	case 1:
	case 2:
		if sel.Kind == KindClusterTmpl {
			return bad("a ClusterAnalysisTemplate has no namespace")
		}
		if errs := validation.IsDNS1123Label(parts[0]); len(errs) > 0 {
			if sel.Kind == "" && strings.ToLower(parts[0]) != parts[0] {
				return bad(fmt.Sprintf("%q is neither AnalysisTemplate nor ClusterAnalysisTemplate, nor a namespace", parts[0]))
			}
			return bad(fmt.Sprintf("namespace %q: %s", parts[0], strings.Join(errs, "; ")))
		}
		sel.Namespace, parts = parts[0], parts[1:]
	default:
		return bad("too many /")
	}
	if errs := validation.IsDNS1123Subdomain(parts[0]); len(errs) > 0 {
		return bad(fmt.Sprintf("name %q: %s", parts[0], strings.Join(errs, "; ")))
	}
	sel.Name = parts[0]
	return sel, nil
}

// Matches reports whether the template kind namespace/name is one the selector names. An object without
// a namespace in the manifests (Argo CD puts it in the Application's) matches any namespace.
func (s TemplateSelector) Matches(kind, namespace, name string) bool {
	return name == s.Name && (s.Kind == "" || s.Kind == kind) &&
		(s.Namespace == "" || namespace == "" || s.Namespace == namespace)
}

// String is the selector in TemplateGrammar.
func (s TemplateSelector) String() string {
	out := s.Name
	if s.Namespace != "" {
		out = s.Namespace + "/" + out
	}
	if s.Kind != "" {
		out = s.Kind + "/" + out
	}
	return out
}
