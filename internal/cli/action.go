package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/install/argocdcm"
	"github.com/analysis-health/analysis-health/internal/install/argocdcm/builtin"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

func init() { verbs = append(verbs, newActionCommand) }

type actionFlags struct {
	file    string
	name    string // with several objects in -f, the one to act on
	kind    string
	version profileValue
	output  *enumValue
	params  []string
	diff    bool
	force   bool
}

// ActionRow is one discovered action; the JSON and YAML outputs of `action list` are arrays of these.
type ActionRow struct {
	Name        string `json:"name"`
	Disabled    bool   `json:"disabled"`
	DisplayName string `json:"displayName,omitempty"`
	IconClass   string `json:"iconClass,omitempty"`
	// Reason explains an action our discovery disabled because an analysis run failed.
	Reason string `json:"reason,omitempty"`
	// Source is whose discovery lists the entry, i.e. who decides whether it is enabled and what the menu
	// shows: "analysis-health" (our discovery.lua, which runs first and wins) or "Argo CD" (its built-in
	// discovery, merged in after ours). A blocked promote-full is ours though its action is Argo CD's.
	Source string `json:"source"`
	// Script is whose action.lua runs: "analysis-health" (action run runs it) or "Argo CD" (a built-in,
	// whose Lua is Argo CD's and not bundled here: RunWith runs it there).
	Script  string `json:"script"`
	RunWith string `json:"runWith,omitempty"`
}

// argocdRun is the command that runs Argo CD's built-in action name on the object in Argo CD.
func argocdRun(obj manifest.Object, name string) string {
	return fmt.Sprintf("argocd app actions run APP %s --kind %s --resource-name %s", name, obj.Kind(), obj.Name())
}

const builtinNote = `Only the actions analysis-health ships are run here. They are installed with
mergeBuiltinActions: true, so Argo CD adds its built-in actions (Rollout: abort, promote-full,
restart, resume, retry, and in v3 pause and skip-current-step; AnalysisRun: terminate) after these;
where both name an action, the entry from analysis-health wins. list shows the built-ins as Argo
CD's (SOURCE says whose discovery lists the entry: a promote-full that analysis-health blocks is
its entry over Argo CD's action), with the argocd app actions run command that runs them there:
their Lua is Argo CD's and not bundled in this binary. With several objects in -f, select one with
--kind and --name.`

func newActionCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "action",
		Short: "List and run the bundled Argo CD resource actions against an object, as Argo CD would",
		Long: `action evaluates the bundled resource actions (Rollout pause and skip-current-step,
AnalysisRun and Experiment terminate) and their discovery scripts the way Argo CD's API server does,
mirroring argocd admin settings resource-overrides list-actions and run-action.

` + builtinNote + `

See docs/actions.md.`,
		Args: fileAsArgument,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError("name a subcommand: list or run")
		},
	}
	cmd.AddCommand(newActionListCommand(o), newActionRunCommand(o))
	return cmd
}

func newActionListCommand(o *Options) *cobra.Command {
	f := &actionFlags{output: newEnum("table", "table", "json", "yaml")}
	cmd := &cobra.Command{
		Use:   "list -f FILE",
		Short: "List the bundled actions for an object and whether each is enabled",
		Long: `list runs the bundled discovery script for the object's kind, as Argo CD does to fill the actions
menu, and prints each action, whether it is disabled and, where a failed analysis run disabled it,
why.

` + builtinNote,
		Example: `  analysis-health action list -f rollout.yaml
  kubectl get rollout checkout -n shop -o yaml | analysis-health action list -f - -o json`,
		Args: fileAsArgument,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.file == "" {
				return usageError("-f FILE is required (use - for standard input)")
			}
			return runActionList(o, f)
		},
	}
	cmd.Flags().StringVarP(&f.file, "filename", "f", "", "file with one YAML/JSON object, or - (stdin)")
	addSelectFlags(cmd, f)
	addVersionFlag(cmd, &f.version, "Argo CD release line to reproduce")
	cmd.Flags().VarP(f.output, "output", "o", "output format: table|json|yaml")
	return cmd
}

func newActionRunCommand(o *Options) *cobra.Command {
	f := &actionFlags{}
	cmd := &cobra.Command{
		Use:   "run ACTION -f FILE",
		Short: "Run a bundled action against an object and print the result",
		Long: `run runs a bundled action the way Argo CD's API server does and prints the object it would patch
(or create) as YAML, or with --diff a unified diff against the input. Nothing is sent to a cluster.

An action the discovery script disables for the object (Argo CD greys it out) is refused with exit
status 1 and the reason (for a failed analysis, the run and its message); --force runs it anyway,
as Argo CD's API server would (it does not consult discovery), with a warning on standard error.
An action analysis-health does not ship is refused, blocked or not. Under Argo CD v3 (the default),
--param key=value sets actionParams.

` + builtinNote,
		Example: `  analysis-health action run skip-current-step -f rollout.yaml --diff
  analysis-health action run terminate -f analysisrun.yaml --argocd-version v3`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("run takes exactly one ACTION, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.file == "" {
				return usageError("-f FILE is required (use - for standard input)")
			}
			return runActionRun(o, f, args[0])
		},
	}
	cmd.Flags().StringVarP(&f.file, "filename", "f", "", "file with one YAML/JSON object, or - (stdin)")
	addSelectFlags(cmd, f)
	addVersionFlag(cmd, &f.version, "Argo CD release line to reproduce")
	cmd.Flags().StringArrayVar(&f.params, "param", nil, "action parameter key=value, repeatable (Argo CD v3 only)")
	cmd.Flags().BoolVar(&f.diff, "diff", false, "print a unified diff against the input instead of the resulting object")
	cmd.Flags().BoolVar(&f.force, "force", false, "run a bundled action its discovery disables for this object, as Argo CD's API server would (it does not consult discovery)")
	return cmd
}

// actionTarget is the object and the bundled scripts for its kind.
type actionTarget struct {
	obj       manifest.Object
	discovery string
	defs      []lua.ActionDef
	engine    engine.Engine
}

func loadActionTarget(o *Options, f *actionFlags) (*actionTarget, error) {
	profile := f.version.p
	objs, err := manifest.Read([]string{f.file}, o.In)
	if err != nil {
		return nil, err
	}
	obj, err := selectObject(f, objs)
	if err != nil {
		return nil, err
	}
	discovery, defs, err := lua.Actions(obj.Group(), obj.Kind())
	if errors.Is(err, lua.ErrNoActions) {
		var kinds []string
		for _, k := range lua.ActionKinds() {
			kinds = append(kinds, k.Key())
		}
		return nil, fmt.Errorf("%s: %s %s: analysis-health has no actions for %s (it has actions for %s; Argo CD's built-in actions are not bundled)",
			obj.Where(), obj.Kind(), obj.Name(), groupKind(obj), strings.Join(kinds, ", "))
	}
	if err != nil {
		return nil, err
	}
	return &actionTarget{obj: obj, discovery: discovery, defs: defs, engine: engine.Engine{Profile: profile}}, nil
}

func addSelectFlags(cmd *cobra.Command, f *actionFlags) {
	cmd.Flags().StringVar(&f.name, "name", "", "with several objects in -f: the name of the one to act on")
	cmd.Flags().StringVar(&f.kind, "kind", "", "with several objects in -f: the kind of the one to act on (Rollout, AnalysisRun, Experiment)")
}

// selectObject is the one object of -f that --kind and --name select (both optional).
func selectObject(f *actionFlags, objs []manifest.Object) (manifest.Object, error) {
	var picked []manifest.Object
	var all []string
	for _, o := range objs {
		all = append(all, o.Kind()+" "+o.Name())
		if (f.kind == "" || strings.EqualFold(f.kind, o.Kind()) || strings.EqualFold(f.kind, groupKind(o))) && (f.name == "" || f.name == o.Name()) {
			picked = append(picked, o)
		}
	}
	switch {
	case len(objs) == 0:
		return manifest.Object{}, fmt.Errorf("%s: %w", f.file, manifest.ErrNoObjects)
	case len(picked) == 1:
		return picked[0], nil
	case len(picked) == 0:
		return manifest.Object{}, usageError("%s: no object matches --kind %q --name %q (it has: %s)", f.file, f.kind, f.name, strings.Join(all, ", "))
	}
	return manifest.Object{}, usageError("%s holds %d objects (%s): select one with --kind KIND --name NAME", f.file, len(picked), strings.Join(all, ", "))
}

func groupKind(obj manifest.Object) string {
	if obj.Group() == "" {
		return obj.Kind()
	}
	return obj.Group() + "/" + obj.Kind()
}

func (t *actionTarget) describe() string {
	if ns := t.obj.Namespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", t.obj.Kind(), ns, t.obj.Name())
	}
	return fmt.Sprintf("%s %s", t.obj.Kind(), t.obj.Name())
}

// discover runs the discovery script and explains entries that a failed analysis disabled: those the same
// script, with blockBypassOnFailedAnalysis switched off, leaves enabled or does not list.
func (t *actionTarget) discover() ([]ActionRow, error) {
	actions, err := t.engine.Discover(t.obj.Object, t.discovery)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: discovery script failed: %w", t.obj.Where(), t.describe(), err)
	}
	var unblocked map[string]bool // name -> enabled, with the option off; nil if the script has no such option
	if off, ok := withoutBlocking(t.discovery); ok {
		alt, err := t.engine.Discover(t.obj.Object, off)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: discovery script failed: %w", t.obj.Where(), t.describe(), err)
		}
		unblocked = map[string]bool{}
		for _, a := range alt {
			unblocked[a.Name] = !a.Disabled
		}
	}
	ours := map[string]bool{}
	for _, d := range t.defs {
		ours[d.Name] = true
	}
	rows := make([]ActionRow, 0, len(actions))
	for _, a := range actions {
		// The entry is ours even when the action is not: our discovery lists promote-full only to block
		// it, and Argo CD keeps the first entry per name, so the menu shows ours.
		row := ActionRow{Name: a.Name, Disabled: a.Disabled, DisplayName: a.DisplayName, IconClass: a.IconClass, Source: "analysis-health", Script: "analysis-health"}
		if !ours[a.Name] {
			row.Script, row.RunWith = "Argo CD", argocdRun(t.obj, a.Name)
		}
		if enabled, listed := unblocked[a.Name]; unblocked != nil && a.Disabled && (enabled || !listed) {
			row.Reason = failedAnalysisReason(t.obj.Object)
		}
		rows = append(rows, row)
	}
	// Argo CD merges its built-in actions after ours (mergeBuiltinActions: true); its own discovery
	// decides whether they are enabled, so they are listed as Argo CD's with the command that runs them.
	listed := map[string]bool{}
	for _, r := range rows {
		listed[r.Name] = true
	}
	if ix, err := builtin.For(t.engine.Profile.String()); err == nil {
		for _, name := range ix.Actions(argocdcm.ConfigMapKey(t.obj.Group(), t.obj.Kind())) {
			if !listed[name] && !ours[name] {
				rows = append(rows, ActionRow{Name: name, Source: "Argo CD", Script: "Argo CD", RunWith: argocdRun(t.obj, name), Reason: "Argo CD's built-in discovery decides"})
			}
		}
	}
	return rows, nil
}

// withoutBlocking switches the discovery script's blockBypassOnFailedAnalysis option off through its
// options block, as the generator's --block-bypass-on-failed-analysis=false does.
func withoutBlocking(script string) (string, bool) {
	if !lua.HasOptions(script) {
		return "", false
	}
	off, err := lua.SetOptions(script, map[string]any{"blockBypassOnFailedAnalysis": false})
	return off, err == nil
}

// failedAnalysisReason names the analysis runs whose verdict the discovery honoured, read from the same
// status fields (the controller's copies of each current run's phase and message).
func failedAnalysisReason(obj map[string]any) string {
	var runs []string
	for _, r := range []struct{ label, group, field string }{
		{"step analysis", "canary", "currentStepAnalysisRunStatus"},
		{"background analysis", "canary", "currentBackgroundAnalysisRunStatus"},
		{"pre-promotion analysis", "blueGreen", "prePromotionAnalysisRunStatus"},
		{"post-promotion analysis", "blueGreen", "postPromotionAnalysisRunStatus"},
	} {
		entry, _ := nestedMap(obj, "status", r.group, r.field)
		phase, _ := entry["status"].(string)
		if phase != "Failed" && phase != "Error" {
			continue
		}
		s := r.label + " run"
		if name, _ := entry["name"].(string); name != "" {
			s += " " + name
		}
		s += " " + phase
		if msg, _ := entry["message"].(string); msg != "" {
			s += ": " + msg
		}
		runs = append(runs, s)
	}
	if len(runs) == 0 {
		return "blocked by a failed analysis"
	}
	return "blocked by " + strings.Join(runs, "; ") + " (answer with retry or abort)"
}

func nestedMap(obj map[string]any, fields ...string) (map[string]any, bool) {
	cur := obj
	for _, f := range fields {
		next, ok := cur[f].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

func runActionList(o *Options, f *actionFlags) error {
	t, err := loadActionTarget(o, f)
	if err != nil {
		return err
	}
	rows, err := t.discover()
	if err != nil {
		return err
	}
	switch f.output.String() {
	case "json":
		enc := json.NewEncoder(o.Out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case "yaml":
		b, err := yaml.Marshal(rows)
		if err != nil {
			return err
		}
		_, err = o.Out.Write(b)
		return err
	}
	tw := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDISABLED\tSOURCE\tREASON")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%v\t%s\t%s\n", r.Name, r.Disabled, r.Source, dash(r.Reason))
	}
	var builtins []string
	for _, r := range rows {
		if r.RunWith != "" {
			line := "  " + r.RunWith
			if r.Source == "analysis-health" && r.Disabled {
				// The menu greys it out, but Argo CD's API server runs an action by name without asking
				// discovery: say so beside the command rather than let it read as a way around the block.
				line += "   (blocked in the menu by analysis-health; Argo CD would still run it)"
			}
			builtins = append(builtins, line)
		}
	}
	if len(builtins) > 0 {
		fmt.Fprintf(tw, "\nArgo CD's own actions run in Argo CD (their Lua is Argo CD's, not bundled here):\n%s\n", strings.Join(builtins, "\n"))
	}
	return tw.Flush()
}

func parseParams(raw []string) (map[string]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	params := map[string]string{}
	for _, p := range raw {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, usageError("invalid --param %q: want key=value", p)
		}
		params[k] = v
	}
	return params, nil
}

func runActionRun(o *Options, f *actionFlags, name string) error {
	params, err := parseParams(f.params)
	if err != nil {
		return err
	}
	if len(params) > 0 && !f.version.p.AtLeast(engine.V32) {
		return usageError("--param needs Argo CD v3 (--argocd-version v3.2 or v3.6): Argo CD v2 actions take no parameters")
	}
	t, err := loadActionTarget(o, f)
	if err != nil {
		return err
	}
	rows, err := t.discover()
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.Name != name {
			continue
		}
		blocked := r.Disabled && r.Source == "analysis-health"
		switch {
		case blocked && r.RunWith != "":
			// Our discovery blocks Argo CD's own action (promote-full after a failed analysis): the block is
			// the answer, and the command to run it anyway comes with what it bypasses.
			return fmt.Errorf("action %q is disabled for %s: %s. It is Argo CD's built-in action (its Lua is not bundled here, so --force cannot run it); "+
				"Argo CD's API server does not consult discovery, so %s would still run it", name, t.describe(), disabledWhy(r), r.RunWith)
		case r.RunWith != "":
			return fmt.Errorf("%s is Argo CD's built-in action for %s, whose Lua is Argo CD's and not bundled here: run it in Argo CD with\n  %s",
				name, groupKind(t.obj), r.RunWith)
		case blocked && !f.force:
			return fmt.Errorf("action %q is disabled for %s: %s; --force runs it anyway, as Argo CD's API server would", name, t.describe(), disabledWhy(r))
		case blocked:
			fmt.Fprintf(o.ErrOut, "Warning: action %q is disabled for %s (%s); running it because of --force\n", name, t.describe(), disabledWhy(r))
		}
	}
	var script string
	var ours []string
	for _, d := range t.defs {
		ours = append(ours, d.Name)
		if d.Name == name {
			script = d.Script
		}
	}
	if script == "" {
		for _, r := range rows {
			if r.Name == name && r.RunWith != "" {
				return fmt.Errorf("%s is Argo CD's built-in action for %s, whose Lua is Argo CD's and not bundled here: run it in Argo CD with\n  %s",
					name, groupKind(t.obj), r.RunWith)
			}
		}
		return fmt.Errorf("unknown action %q for %s: analysis-health ships %s; Argo CD's built-in actions are not bundled (run them with argocd app actions run)",
			name, groupKind(t.obj), strings.Join(ours, ", "))
	}
	impacted, err := t.engine.RunAction(t.obj.Object, script, params)
	if err != nil {
		return fmt.Errorf("%s: %s: action %s failed: %w", t.obj.Where(), t.describe(), name, err)
	}
	for i, imp := range impacted {
		if imp.Operation != engine.Patch && imp.Operation != engine.Create {
			return fmt.Errorf("action %s: returned object %d has no operation (want create or patch)", name, i+1)
		}
	}
	// Render everything before writing, so a failure prints nothing that looks like a result.
	var out strings.Builder
	if f.diff {
		if err := writeActionDiff(&out, t.obj.Object, name, impacted); err != nil {
			return err
		}
		if out.Len() == 0 {
			fmt.Fprintf(o.ErrOut, "action %s changes no field of %s\n", name, t.describe())
		}
	} else if err := writeActionObjects(&out, impacted); err != nil {
		return err
	}
	_, err = io.WriteString(o.Out, out.String())
	return err
}

// disabledWhy is why the discovery disabled r: the failed analysis, or the object's state.
func disabledWhy(r ActionRow) string {
	if r.Reason != "" {
		return r.Reason
	}
	return "the bundled discovery script disables it in this object's state"
}

func objectYAML(obj map[string]any) (string, error) {
	if obj == nil {
		return "", nil
	}
	b, err := yaml.Marshal(obj)
	return string(b), err
}

func impactedName(obj map[string]any) string {
	m := manifest.Object{Object: obj}
	if m.Namespace() != "" {
		return fmt.Sprintf("%s %s/%s", m.Kind(), m.Namespace(), m.Name())
	}
	return fmt.Sprintf("%s %s", m.Kind(), m.Name())
}

// writeActionObjects prints the returned objects as YAML documents; when there is more than one, or one to
// create, a comment names the operation.
func writeActionObjects(w io.Writer, impacted []engine.Impacted) error {
	label := len(impacted) > 1
	for _, imp := range impacted {
		if imp.Operation == engine.Create {
			label = true
		}
	}
	for i, imp := range impacted {
		y, err := objectYAML(imp.Object)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		if label {
			fmt.Fprintf(w, "# %s %s\n", imp.Operation, impactedName(imp.Object))
		}
		io.WriteString(w, y)
	}
	return nil
}

// writeActionDiff prints, per returned object, a unified diff from the input (for a patch) or from nothing
// (for a create). Null fields of the input are left out: Lua cannot carry them, so every action drops
// them, and the merge patch Argo CD sends for a dropped null changes nothing.
func writeActionDiff(w io.Writer, input map[string]any, action string, impacted []engine.Impacted) error {
	before, err := objectYAML(withoutNulls(input))
	if err != nil {
		return err
	}
	for _, imp := range impacted {
		after, err := objectYAML(imp.Object)
		if err != nil {
			return err
		}
		from, to := impactedName(input)+" (live)", impactedName(imp.Object)+" (after "+action+")"
		if imp.Operation == engine.Create {
			io.WriteString(w, verify.UnifiedDiff("", after, "/dev/null", impactedName(imp.Object)+" (created by "+action+")"))
			continue
		}
		io.WriteString(w, verify.UnifiedDiff(before, after, from, to))
	}
	return nil
}

func withoutNulls(v map[string]any) map[string]any {
	out := make(map[string]any, len(v))
	for k, item := range v {
		if item == nil {
			continue
		}
		out[k] = withoutNullsIn(item)
	}
	return out
}

func withoutNullsIn(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return withoutNulls(x)
	case []any:
		l := make([]any, len(x))
		for i, item := range x {
			l[i] = withoutNullsIn(item)
		}
		return l
	}
	return v
}
