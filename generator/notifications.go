package generator

import (
	"fmt"
	"regexp"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"
)

// Notifications is the folder format of Argo CD notifications for a failed analysis: a trigger and a
// template for argocd-notifications-cm (Argo CD's notifications controller, github.com/argoproj/
// notifications-engine), the argocd-cmd-params-cm setting the trigger needs on Argo CD v3, and the same as
// values for the argo-helm argo-cd chart. It has options of its own (NotificationsOptions,
// GenerateNotifications); docs/notifications.md.
//
// The trigger reads what Argo CD keeps in the Application: the health our scripts give each managed
// Rollout, AnalysisRun and Experiment, in status.resources[].health, whose message names the AnalysisRun
// and the metric. Argo CD v2 persists it there by default; v3 only with controller.resource.health.persist
// (argo-cd v3.6.1 controller/health.go setApplicationHealth: otherwise status.resources[].health is nil and
// the Application's own status.health.message names only the resource, "Caused by argoproj.io/Rollout:…").
const Notifications Format = "notifications"

// Names in the notifications artifacts.
const (
	// NotificationsTrigger is the trigger an Application subscribes to
	// (notifications.argoproj.io/subscribe.on-analysis-failed.<service>: <recipient>).
	NotificationsTrigger = "on-analysis-failed"
	// NotificationsTemplate is the template the trigger sends.
	NotificationsTemplate = "app-analysis-failed"
	// PersistResourceHealthKey is the argocd-cmd-params-cm key the application controller reads into
	// ARGOCD_APPLICATION_CONTROLLER_PERSIST_RESOURCE_HEALTH (--persist-resource-health; default false
	// since v3.0, true in v2).
	PersistResourceHealthKey = "controller.resource.health.persist"
)

// Files of the notifications folder.
const (
	NotificationsCMPatchFile = "argocd-notifications-cm-patch.yaml"
	CmdParamsPatchFile       = "argocd-cmd-params-cm-patch.yaml"
	NotificationsValuesFile  = "values.yaml"
)

// NotificationsOptions select what GenerateNotifications renders.
type NotificationsOptions struct {
	// Inconclusive is InconclusiveDegraded to notify an inconclusive analysis too (its Rollout is
	// Suspended with the default scripts, Degraded with --inconclusive degraded); empty or
	// InconclusiveSuspended: only a Failed or Error analysis.
	Inconclusive string
	// Namespace of Argo CD, in the usage hints; default DefaultNamespace.
	Namespace string
	// Version of analysis-health named in the headers; default "dev".
	Version string
}

func (o NotificationsOptions) resolve() (NotificationsOptions, error) {
	switch o.Inconclusive {
	case "":
		o.Inconclusive = InconclusiveSuspended
	case InconclusiveSuspended, InconclusiveDegraded:
	default:
		return o, fmt.Errorf("inconclusive status %q is not one of %s, %s", o.Inconclusive, InconclusiveSuspended, InconclusiveDegraded)
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if !validNamespace(o.Namespace) {
		return o, fmt.Errorf("namespace %q is not a valid Kubernetes namespace name (lower-case letters, digits and '-', at most 63)", o.Namespace)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	return o, nil
}

// Validate reports options GenerateNotifications would reject.
func (o NotificationsOptions) Validate() error {
	_, err := o.resolve()
	return err
}

// AnalysisVerdictPattern is the RE2 expression (Go's regexp, which both expr's `matches` and sprig's
// regexMatch use) that a managed resource's health message matches when it reports a failed analysis:
// our Rollout script's "<Step|Background|Pre-promotion|Post-promotion> analysis run <name> Failed|Error:",
// the Rollouts controller's abort message it passes on ("… analysis phase error/failed: …", the experiment
// case of argo-rollouts#4009), our Experiment script's "analysis <name> (AnalysisRun <run>) Failed|Error",
// and the AnalysisRun's own `Metric "<name>" assessed Failed|Error` and "Analysis spec invalid". With
// inconclusive, "Inconclusive" counts as a verdict too, and so does the pause an inconclusive run causes.
// No backslash: it sits in a single-quoted expr string and in a template's raw string unchanged.
func AnalysisVerdictPattern(inconclusive bool) string {
	verdicts := "Failed|Error"
	extra := ""
	if inconclusive {
		verdicts += "|Inconclusive"
		extra = "|nalysis was inconclusive"
	}
	return "analysis run [^ ]+ (" + verdicts + ")" +
		"|analysis [^ ]+ ([(]AnalysisRun [^ ]+[)] )?(" + verdicts + ")" +
		"|analysis phase (is )?error/failed" +
		`|Metric "[^"]*" assessed (` + verdicts + ")" +
		"|Analysis spec invalid" + extra
}

// notifiedStatuses are the health statuses of a resource the trigger looks at: a failed analysis is
// Degraded; an inconclusive one Suspended (the default scripts) or Degraded (--inconclusive degraded).
func notifiedStatuses(inconclusive bool) []string {
	if inconclusive {
		return []string{"Degraded", "Suspended"}
	}
	return []string{"Degraded"}
}

// analysisKinds are the kinds whose health carries an analysis verdict, all in group argoproj.io.
var analysisKinds = []string{"Rollout", "AnalysisRun", "Experiment"}

// quoteList is items quoted, joined by sep: an expr array's elements (", ") or a template's arguments (" ").
func quoteList(items []string, quote, sep string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = quote + s + quote
	}
	return strings.Join(q, sep)
}

// NotificationsOncePer is the trigger's oncePer: the revision the last sync deployed, as the catalog's
// triggers key on it (notifications_catalog/triggers/on-deployed.yaml); a multi-source Application's
// revisions; else the revision the Application is compared at. The engine keeps a notified key until 100
// newer ones (notifications-engine pkg/controller state.go), so a revision is notified once.
const NotificationsOncePer = "app.status?.operationState?.syncResult?.revision ?? app.status?.operationState?.syncResult?.revisions ?? app.status?.sync?.revision"

// notificationsWhen is the trigger's condition, an expr expression over the Application (`app`).
func notificationsWhen(inconclusive bool) string {
	return "any(app.status?.resources ?? [], {.group == 'argoproj.io' && .kind in [" + quoteList(analysisKinds, "'", ", ") + "]" +
		" && .health?.status in [" + quoteList(notifiedStatuses(inconclusive), "'", ", ") + "]" +
		" && (.health?.message ?? '') matches '" + AnalysisVerdictPattern(inconclusive) + "'})"
}

// notificationsMessage is the template's message (Go text/template with sprig, as the engine renders it):
// the Application, the revision (the sync's result, or, while a sync runs without one, the compared
// revision: Kargo clears the previous operation's state when it starts a sync), then one line per resource the trigger matched: its kind, namespace and
// name, and its health message, which names the AnalysisRun and the metric.
func notificationsMessage(inconclusive bool) string {
	what := "failed"
	if inconclusive {
		what = "failed or was inconclusive"
	}
	return `{{- $verdict := ` + "`" + AnalysisVerdictPattern(inconclusive) + "`" + ` -}}
Analysis ` + what + ` in Application {{.app.metadata.name}}
{{- with .app.status}}{{$rev := ""}}{{with .sync}}{{$rev = .revision}}{{end}}
{{- with .operationState}}{{with .syncResult}}{{with .revision}}{{$rev = .}}{{end}}{{end}}{{end}}
{{- with $rev}} at revision {{.}}{{end}}{{end}}:
{{- with .app.status}}{{range $r := .resources}}{{with $r.health}}
{{- if and (eq (print $r.group) "argoproj.io") (has (print $r.kind) (list ` + quoteList(analysisKinds, `"`, " ") + `))` +
		` (has (print .status) (list ` + quoteList(notifiedStatuses(inconclusive), `"`, " ") + `)) (regexMatch $verdict (print .message))}}
{{$r.kind}} {{$r.namespace}}/{{$r.name}}: {{.message}}
{{- end}}{{end}}{{end}}{{end}}
Application details: {{.context.argocdUrl}}/applications/{{.app.metadata.name}}.
`
}

// notificationsCondition is notifications-engine's triggers.Condition, field for field (json tags), to
// write the trigger and check that it reads back.
type notificationsCondition struct {
	Description string   `json:"description,omitempty"`
	OncePer     string   `json:"oncePer,omitempty"`
	Send        []string `json:"send,omitempty"`
	When        string   `json:"when,omitempty"`
}

// NotificationsData is the argocd-notifications-cm data: trigger.on-analysis-failed and
// template.app-analysis-failed, each a YAML document as the engine parses them (pkg/api config.go
// ParseConfig: trigger.<name> a list of conditions, template.<name> a notification template).
func NotificationsData(o NotificationsOptions) (map[string]string, error) {
	o, err := o.resolve()
	if err != nil {
		return nil, err
	}
	return notificationsData(o)
}

func notificationsData(o NotificationsOptions) (map[string]string, error) {
	inconclusive := o.Inconclusive == InconclusiveDegraded
	if _, err := regexp.Compile(AnalysisVerdictPattern(inconclusive)); err != nil {
		return nil, err
	}
	description := "An analysis of the revision failed: the Rollout, the AnalysisRun and the metric (analysis-health). Once per revision."
	if inconclusive {
		description = "An analysis of the revision failed or was inconclusive: the Rollout, the AnalysisRun and the metric (analysis-health). Once per revision."
	}
	cond := notificationsCondition{Description: description, OncePer: NotificationsOncePer,
		Send: []string{NotificationsTemplate}, When: notificationsWhen(inconclusive)}
	trigger, err := encode("", sequence(mapping(
		"description", str(cond.Description),
		"oncePer", str(cond.OncePer),
		"send", sequence(str(NotificationsTemplate)),
		"when", str(cond.When),
	)), nil)
	if err != nil {
		return nil, err
	}
	var back []notificationsCondition
	if err := sigsyaml.UnmarshalStrict(trigger, &back); err != nil || len(back) != 1 || back[0].When != cond.When ||
		back[0].OncePer != cond.OncePer || back[0].Description != cond.Description || len(back[0].Send) != 1 {
		return nil, fmt.Errorf("the generated trigger does not read back as written (%v):\n%s", err, trigger)
	}
	subject := "Analysis failed: Application {{.app.metadata.name}}"
	if inconclusive {
		subject = "Analysis failed or inconclusive: Application {{.app.metadata.name}}"
	}
	message := notificationsMessage(inconclusive)
	template, err := encode("", mapping(
		"message", literal(message),
		"email", mapping("subject", str(subject)),
	), map[string]string{"message": message})
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"trigger." + NotificationsTrigger:   string(trigger),
		"template." + NotificationsTemplate: string(template),
	}, nil
}

// GenerateNotifications renders the notifications folder, files sorted by path.
func GenerateNotifications(o NotificationsOptions) ([]File, error) {
	o, err := o.resolve()
	if err != nil {
		return nil, err
	}
	data, err := notificationsData(o)
	if err != nil {
		return nil, err
	}
	cm, err := encode(o.header(
		"JSON merge patch that adds the analysis-health trigger and template to argocd-notifications-cm:",
		"  kubectl patch configmap argocd-notifications-cm -n "+o.Namespace+" --type merge --patch-file "+NotificationsCMPatchFile,
		"Argo CD v3 also needs "+CmdParamsPatchFile+". Subscribe an Application (or set subscriptions here):",
		"  notifications.argoproj.io/subscribe."+NotificationsTrigger+".<service>: <recipient>",
	), mapping("data", scripts(data)), data)
	if err != nil {
		return nil, err
	}
	params, err := encode(o.header(
		"JSON merge patch of argocd-cmd-params-cm: the application controller keeps each resource's health in",
		"the Application (status.resources[].health), where the trigger reads it. Argo CD v3 does not by",
		"default; v2 does, and this changes nothing there. It costs an Application write per health change of",
		"any resource, and the health in the Application's size (docs/notifications.md). The controller reads it",
		"at start:",
		"  kubectl patch configmap argocd-cmd-params-cm -n "+o.Namespace+" --type merge --patch-file "+CmdParamsPatchFile,
		"  kubectl rollout restart statefulset argocd-application-controller -n "+o.Namespace,
	), mapping("data", mapping(PersistResourceHealthKey, str("true"))), nil)
	if err != nil {
		return nil, err
	}
	// The chart writes every notifications.triggers and notifications.templates key into
	// argocd-notifications-cm as is, and configs.params into argocd-cmd-params-cm, whose checksum restarts
	// the application controller (templates/argocd-configs/, argocd-application-controller/statefulset.yaml).
	values, err := encode(o.header(
		"Values for the argo-helm argo-cd chart: the trigger and template in argocd-notifications-cm, and",
		PersistResourceHealthKey+" in argocd-cmd-params-cm (Argo CD v3 needs it; docs/notifications.md).",
		"Helm merges them with your other values files:",
		"  helm upgrade RELEASE argo/argo-cd -n "+o.Namespace+" -f your-values.yaml -f "+NotificationsValuesFile,
	), mapping(
		"configs", mapping("params", mapping(PersistResourceHealthKey, str("true"))),
		"notifications", mapping(
			"templates", scripts(map[string]string{"template." + NotificationsTemplate: data["template."+NotificationsTemplate]}),
			"triggers", scripts(map[string]string{"trigger." + NotificationsTrigger: data["trigger."+NotificationsTrigger]}),
		),
	), data)
	if err != nil {
		return nil, err
	}
	files := []File{
		{Path: CmdParamsPatchFile, Data: params},
		{Path: NotificationsCMPatchFile, Data: cm},
		{Path: NotificationsValuesFile, Data: values},
	}
	sortFiles(files)
	return files, nil
}

func (o NotificationsOptions) command() string {
	return fmt.Sprintf("analysis-health generate --format notifications --inconclusive %s --namespace %s --out DIR",
		strings.ToLower(o.Inconclusive), o.Namespace)
}

func (o NotificationsOptions) header(usage ...string) string {
	return header{version: o.Version, command: o.command()}.with(usage...)
}
