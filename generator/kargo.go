package generator

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path"
	"reflect"
	"regexp"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

// Kargo is the folder format that installs the analysis-health/rollout-analysis metric-provider plugin
// (cmd/rollouts-plugin-metric-analysis-health) for Kargo verification: the AnalysisTemplate (or
// ClusterAnalysisTemplate) that runs it, the Stage spec.verification snippet, values for the argo-helm
// argo-rollouts chart, and the RBAC. It has options of its own (KargoOptions, GenerateKargo).
const Kargo Format = "kargo"

// KargoPluginName is the plugin's name in argo-rollouts-config and in a metric's provider.plugin
// (rolloutplugin.Name; a test keeps the two equal).
const KargoPluginName = "analysis-health/rollout-analysis"

// Names used in the kargo artifacts.
const (
	KargoTemplateName = "rollout-analysis"
	KargoMetricName   = "rollout-analysis"
	KargoReaderRole   = "analysis-health-rollout-reader"
	// Template arguments, filled by the Stage's spec.verification.args.
	KargoArgRollout   = "rollout-name"
	KargoArgNamespace = "rollout-namespace"
	KargoArgRevision  = "revision"
	KargoArgImage     = "image"
)

// Files of the kargo folder.
const (
	KargoTemplateFile = "analysis-template.yaml"
	KargoStageFile    = "stage-verification.yaml"
	KargoValuesFile   = "argo-rollouts-values.yaml"
	KargoRBACFile     = "rbac.yaml"
)

// KargoOptions select what GenerateKargo renders.
type KargoOptions struct {
	// Project is the Kargo Project namespace: the AnalysisTemplate goes there. Empty: a
	// ClusterAnalysisTemplate (Kargo v1.3+ references it with kind: ClusterAnalysisTemplate).
	Project string
	// Rollout and Namespace fill the Stage's verification args; empty, the args are Kargo expressions
	// reading the Stage's vars rolloutName and rolloutNamespace.
	Rollout   string
	Namespace string
	// PluginLocation is where the Rollouts controller gets the plugin binary: an http(s) URL, or a file://
	// path inside the controller's container. Required.
	PluginLocation string
	// PluginImage is an image holding the plugin binary at PluginImageBinary (docs/kargo.md: FROM scratch
	// and the release binary). With a file:// location, the values add an init container that runs that
	// binary's --copy-to into an emptyDir, mounted in the controller at the location's folder. The image
	// has no shell and no cp, like the distroless controller image.
	PluginImage string
	// PluginSHA256 is the binary's hex SHA-256 (64 characters). Required for an http(s) location: the
	// controller checks it only for downloads (utils/plugin/downloader.go checkShaOfPlugin).
	PluginSHA256 string
	// KubeconfigSecret (and KubeconfigKey) name a Secret in the Project namespace holding a kubeconfig for
	// the Rollout's cluster, when it is not the Rollouts controller's own (multi-cluster).
	KubeconfigSecret string
	KubeconfigKey    string
	// RolloutsServiceAccount is "<namespace>/<name>" of the Rollouts controller's ServiceAccount, bound to
	// the reader Role in single-cluster setups; default argo-rollouts/argo-rollouts (the chart's).
	RolloutsServiceAccount string
	// ImageRepo is the image repository of the Freight the Stage verifies (a Warehouse subscription): the
	// Stage passes the Freight's image as a Kargo expression, and the plugin judges the revision whose pod
	// template runs it. Empty: the revision the Rollout delivers at the first measurement (commitFrom
	// Freight; Kargo starts verification only once the Stage is Healthy).
	ImageRepo string
	// Inconclusive is the plugin's inconclusive option: InconclusiveDegraded makes an inconclusive analysis a failed
	// verification, as Options.Inconclusive makes it Degraded in the scripts; empty or InconclusiveSuspended:
	// the plugin's default, Inconclusive.
	Inconclusive string
	// NoAnalysis is the plugin's noAnalysis option, the verification of a revision fully promoted without
	// any analysis of it (a first deployment, a strategy without analysis, analysis removed):
	// verdict.NoAnalysisInconclusive or verdict.NoAnalysisFailed; empty or verdict.NoAnalysisSuccessful is
	// the plugin's default, Successful, and leaves the field out of the template.
	NoAnalysis string
	// RolloutsValues are the values the argo-rollouts release runs with now, as `helm get values
	// argo-rollouts -n argo-rollouts -o yaml` prints them, or the values files helm is given, in helm's -f
	// order (Path names each in errors and in the header). Helm replaces a list of an earlier values file
	// by the later file's whole list, so the lists of the generated values are these lists with
	// analysis-health's entries merged in by name: the release's other plugins, init containers, volumes
	// and mounts stay, and a second Project's --allow-namespace-pair adds to the first's. Nil: a release
	// without values of its own (the CLI's --rollouts-values none, which it asks for explicitly); the
	// header then says that the lists replace any of yours.
	RolloutsValues []File
	// Version of analysis-health named in the headers; default "dev".
	Version string
}

// DefaultKargoKubeconfigKey is the Secret key read when KubeconfigKey is empty.
const DefaultKargoKubeconfigKey = "kubeconfig"

// DefaultRolloutsServiceAccount is the argo-rollouts chart's controller ServiceAccount (release
// argo-rollouts in namespace argo-rollouts).
const DefaultRolloutsServiceAccount = "argo-rollouts/argo-rollouts"

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// PluginSHA256Of is the value for KargoOptions.PluginSHA256 of a binary's content.
func PluginSHA256Of(binary []byte) string {
	sum := sha256.Sum256(binary)
	return hex.EncodeToString(sum[:])
}

// Validate reports options GenerateKargo would reject.
func (o KargoOptions) Validate() error {
	var errs []string
	if o.PluginLocation == "" {
		errs = append(errs, "the plugin location is required (an https:// URL of the released binary, or file:///path in the controller's container)")
	} else if u, err := url.ParseRequestURI(o.PluginLocation); err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file") {
		// utils/plugin/downloader.go accepts these three schemes only, and the controller exits otherwise.
		errs = append(errs, fmt.Sprintf("plugin location %q is not an http://, https:// or file:// URL", o.PluginLocation))
	} else if u.Scheme != "file" && o.PluginSHA256 == "" {
		errs = append(errs, "an http(s) plugin location needs the binary's sha256, which the controller checks after the download: give it with --plugin-sha256 HEX, or the binary with --plugin-file FILE")
	}
	if o.PluginImage != "" {
		if !strings.HasPrefix(o.PluginLocation, "file://") {
			errs = append(errs, "a plugin image is copied to a file:// location: give --plugin-location file:///DIR/NAME")
		} else if dir := path.Dir(strings.TrimPrefix(o.PluginLocation, "file://")); dir == "/" || dir == "." {
			errs = append(errs, fmt.Sprintf("plugin location %q must name a folder for the plugin's volume (file:///DIR/NAME)", o.PluginLocation))
		}
		if strings.ContainsAny(o.PluginImage, " \t\n\"'{}$") {
			errs = append(errs, fmt.Sprintf("plugin image %q is not an image reference", o.PluginImage))
		}
	}
	if o.PluginSHA256 != "" && !sha256Hex.MatchString(o.PluginSHA256) {
		// Any other length is compared with something no binary hashes to (checkShaOfPlugin).
		errs = append(errs, fmt.Sprintf("--plugin-sha256 %q is not 64 lower-case hex digits (the binary's SHA-256; or give the binary with --plugin-file)", o.PluginSHA256))
	}
	for _, ns := range []struct{ what, v string }{{"project", o.Project}, {"namespace", o.Namespace}} {
		if ns.v != "" && !validNamespace(ns.v) {
			errs = append(errs, fmt.Sprintf("%s %q is not a valid namespace name", ns.what, ns.v))
		}
	}
	if (o.Rollout == "") != (o.Namespace == "") {
		errs = append(errs, "the Rollout's name and namespace go together: give both or neither")
	}
	if o.Rollout != "" && !validName(o.Rollout) {
		errs = append(errs, fmt.Sprintf("rollout %q is not a valid object name", o.Rollout))
	}
	if o.KubeconfigSecret != "" && !validName(o.KubeconfigSecret) {
		errs = append(errs, fmt.Sprintf("kubeconfig Secret %q is not a valid object name", o.KubeconfigSecret))
	}
	if o.KubeconfigKey != "" && o.KubeconfigSecret == "" {
		errs = append(errs, "a kubeconfig key needs the kubeconfig Secret's name")
	}
	if o.ImageRepo != "" && (strings.ContainsAny(o.ImageRepo, " \t\n\"'{}$") || strings.Contains(o.ImageRepo, "@") || strings.Contains(o.ImageRepo[strings.LastIndex(o.ImageRepo, "/")+1:], ":")) {
		errs = append(errs, fmt.Sprintf("image repository %q is not a repository URL (no tag, digest, quotes or expressions)", o.ImageRepo))
	}
	if o.Inconclusive != "" && o.Inconclusive != InconclusiveSuspended && o.Inconclusive != InconclusiveDegraded {
		errs = append(errs, fmt.Sprintf("inconclusive %q is neither %s nor %s", o.Inconclusive, InconclusiveSuspended, InconclusiveDegraded))
	}
	if _, ok := verdict.NoAnalysisPhase(o.NoAnalysis); !ok || o.NoAnalysis != strings.ToLower(o.NoAnalysis) {
		errs = append(errs, fmt.Sprintf("no-analysis %q is not one of %s", o.NoAnalysis, strings.Join(verdict.NoAnalysisPolicies, ", ")))
	}
	if o.RolloutsServiceAccount != "" {
		ns, name, ok := strings.Cut(o.RolloutsServiceAccount, "/")
		if !ok || !validNamespace(ns) || !validName(name) {
			errs = append(errs, fmt.Sprintf("Rollouts service account %q is not <namespace>/<name>", o.RolloutsServiceAccount))
		}
	}
	if len(errs) == 0 && o.RolloutsValues != nil {
		// the merge's refusals (a conflicting entry, a malformed file) are bad input as well
		if _, err := kargoController(o); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// validName is the DNS-1123 subdomain rule of object names.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if !validNamespace(part) {
			return false
		}
	}
	return true
}

// GenerateKargo renders the kargo folder, files sorted by path.
func GenerateKargo(o KargoOptions) ([]File, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.KubeconfigSecret != "" && o.KubeconfigKey == "" {
		o.KubeconfigKey = DefaultKargoKubeconfigKey
	}
	if o.RolloutsServiceAccount == "" {
		o.RolloutsServiceAccount = DefaultRolloutsServiceAccount
	}
	var files []File
	for _, r := range []struct {
		path   string
		render func(KargoOptions) ([]byte, error)
	}{
		{KargoTemplateFile, kargoTemplate},
		{KargoRBACFile, kargoRBAC},
		{KargoStageFile, kargoStage},
		{KargoValuesFile, kargoValues},
	} {
		data, err := r.render(o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.path, err)
		}
		files = append(files, File{Path: r.path, Data: data})
	}
	sortFiles(files)
	return files, nil
}

func sortFiles(files []File) {
	for i := 1; i < len(files); i++ {
		for j := i; j > 0 && files[j].Path < files[j-1].Path; j-- {
			files[j], files[j-1] = files[j-1], files[j]
		}
	}
}

func (o KargoOptions) command() string {
	c := "analysis-health generate --format kargo"
	for _, f := range []struct{ flag, v string }{
		{"--project", o.Project}, {"--rollout", o.Rollout}, {"--namespace", o.Namespace},
		{"--plugin-location", o.PluginLocation}, {"--plugin-image", o.PluginImage}, {"--plugin-sha256", o.PluginSHA256},
		{"--kubeconfig-secret", o.KubeconfigSecret}, {"--image-repo", o.ImageRepo},
	} {
		if f.v != "" {
			c += " " + f.flag + " " + f.v
		}
	}
	if o.RolloutsValues == nil {
		c += " --rollouts-values " + RolloutsValuesNone
	}
	for _, f := range o.RolloutsValues {
		c += " --rollouts-values " + f.Path
	}
	if o.KubeconfigSecret != "" && o.KubeconfigKey != DefaultKargoKubeconfigKey {
		c += " --kubeconfig-key " + o.KubeconfigKey
	}
	if o.RolloutsServiceAccount != DefaultRolloutsServiceAccount {
		c += " --rollouts-service-account " + o.RolloutsServiceAccount
	}
	if o.Inconclusive == InconclusiveDegraded {
		c += " --inconclusive degraded"
	}
	if o.NoAnalysis != "" && o.NoAnalysis != verdict.NoAnalysisSuccessful {
		c += " --no-analysis " + o.NoAnalysis
	}
	return c + " --out DIR"
}

func (o KargoOptions) header(usage ...string) string {
	return header{version: o.Version, command: o.command()}.with(usage...)
}

func docs(header string, objs ...any) ([]byte, error) {
	var b strings.Builder
	b.WriteString(header)
	for i, obj := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		out, err := marshalOneLineExpressions(obj)
		if err != nil {
			return nil, err
		}
		b.Write(out)
	}
	return []byte(b.String()), nil
}

// marshalOneLineExpressions is sigsyaml.Marshal, except that every Kargo expression (a string holding
// "${{") is printed on one line: goyaml.v2 folds a plain scalar longer than 80 columns at a space, which
// YAML reads back the same but which cuts a `${{ … }}` in two for the reader. Each such string is
// marshalled as a placeholder without spaces, then put back verbatim; the result must read back as obj.
func marshalOneLineExpressions(obj any) ([]byte, error) {
	var exprs []string
	var swap func(v any) any
	swap = func(v any) any {
		switch v := v.(type) {
		case object:
			m := make(object, len(v))
			for k, e := range v {
				m[k] = swap(e)
			}
			return m
		case []any:
			l := make([]any, len(v))
			for i, e := range v {
				l[i] = swap(e)
			}
			return l
		case string:
			if strings.Contains(v, "${{") {
				exprs = append(exprs, v)
				return fmt.Sprintf("analysis-health-kargo-expression-%d", len(exprs)-1)
			}
		}
		return v
	}
	out, err := sigsyaml.Marshal(swap(obj))
	if err != nil || len(exprs) == 0 {
		return out, err
	}
	s := string(out)
	for i := len(exprs) - 1; i >= 0; i-- { // -10 before -1
		s = strings.Replace(s, fmt.Sprintf("analysis-health-kargo-expression-%d", i), exprs[i], 1)
	}
	want, err := sigsyaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var got, back any
	if err := sigsyaml.Unmarshal([]byte(s), &got); err != nil {
		return nil, fmt.Errorf("kargo expressions on one line: %w", err)
	}
	if err := sigsyaml.Unmarshal(want, &back); err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(got, back) {
		return nil, fmt.Errorf("kargo expressions on one line do not read back as written:\n%s", s)
	}
	return []byte(s), nil
}

type object = map[string]any

var kargoLabels = object{"app.kubernetes.io/name": "analysis-health", "app.kubernetes.io/component": "rollout-analysis"}

// kargoTemplate is one metric run by the plugin. No count and no interval: a single measurement
// (Metric.EffectiveCount), which stays Running (with resumeAt) until the verdict; failureLimit and
// inconclusiveLimit 0 make that one measurement the metric's phase. consecutiveErrorLimit keeps the
// controller's default: an Error (an API hiccup) is retried every 10 s, four times.
func kargoTemplate(o KargoOptions) ([]byte, error) {
	config := object{
		"name":      "{{args." + KargoArgRollout + "}}",
		"namespace": "{{args." + KargoArgNamespace + "}}",
		"revision":  "{{args." + KargoArgRevision + "}}",
		"image":     "{{args." + KargoArgImage + "}}",
	}
	if o.KubeconfigSecret != "" {
		config["kubeconfigSecret"] = object{"name": o.KubeconfigSecret, "key": o.KubeconfigKey}
	}
	if o.Inconclusive == InconclusiveDegraded {
		config["inconclusive"] = "degraded"
	}
	// the default is left out, as the plugin's default is the same verdict
	if o.NoAnalysis != "" && o.NoAnalysis != verdict.NoAnalysisSuccessful {
		config["noAnalysis"] = o.NoAnalysis
	}
	md := object{"name": KargoTemplateName, "labels": kargoLabels}
	kind := "ClusterAnalysisTemplate"
	where := "Apply it on the Kargo control-plane cluster (cluster-scoped); Stages reference it with kind: ClusterAnalysisTemplate."
	if o.Project != "" {
		kind = "AnalysisTemplate"
		md["namespace"] = o.Project
		where = "Apply it on the Kargo control-plane cluster, in the Project namespace " + o.Project + " (Kargo reads templates from the Stage's namespace)."
	}
	t := object{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       kind,
		"metadata":   md,
		"spec": object{
			"args": []any{
				object{"name": KargoArgRollout},
				object{"name": KargoArgNamespace},
				object{"name": KargoArgRevision, "value": ""},
				object{"name": KargoArgImage, "value": ""},
			},
			"metrics": []any{object{
				"name":     KargoMetricName,
				"provider": object{"plugin": object{KargoPluginName: config}},
			}},
		},
	}
	// the header says what a revision promoted without analysis gets, the default included
	noAnalysis := "is Successful, the default (--no-analysis inconclusive or failed; docs/kargo.md)."
	switch o.NoAnalysis {
	case verdict.NoAnalysisInconclusive, verdict.NoAnalysisFailed:
		noAnalysis = "is " + strings.ToUpper(o.NoAnalysis[:1]) + o.NoAnalysis[1:] + " (noAnalysis: " + o.NoAnalysis + "; docs/kargo.md)."
	}
	return docs(o.header(
		"The verification that shows a Rollout's own analysis in Kargo without running it again: one metric whose",
		"measurement is the verdict of the Rollout's AnalysisRuns for the revision of the Freight, pinned at the first",
		"measurement (the image arg selects the revision that runs the Freight's image; docs/kargo.md).",
		"A revision fully promoted without any analysis of it (a first deployment, a strategy without analysis,",
		"analysis removed) "+noAnalysis,
		where,
	), t)
}

// kargoStage is the Stage's spec.verification (Kargo pkg/rollouts/analysis_run_builder.go flattens the
// template into the AnalysisRun and fills the args, which the template must declare).
func kargoStage(o KargoOptions) ([]byte, error) {
	ref := object{"name": KargoTemplateName}
	if o.Project == "" {
		ref["kind"] = "ClusterAnalysisTemplate"
	}
	rollout, namespace := o.Rollout, o.Namespace
	note := "The args name the Rollout whose analysis is shown."
	if rollout == "" {
		rollout, namespace = "${{ vars.rolloutName }}", "${{ vars.rolloutNamespace }}"
		note = "The args read the Stage's vars rolloutName and rolloutNamespace (spec.vars), so one snippet fits every Stage."
	}
	args := []any{
		object{"name": KargoArgRollout, "value": rollout},
		object{"name": KargoArgNamespace, "value": namespace},
	}
	if o.ImageRepo != "" {
		args = append(args, object{"name": KargoArgImage, "value": KargoImageExpression(o.ImageRepo)})
		note += " The image arg is the Freight's image of " + o.ImageRepo + ", so the revision running it is the one judged."
	}
	spec := object{
		"verification": object{
			"analysisTemplates": []any{ref},
			"args":              args,
		},
	}
	return docs(o.header(
		"Merge into each Stage's spec: Kargo starts this verification once the Stage is Healthy after a promotion.",
		note,
	), object{"spec": spec})
}

// kargoValues are values for the argo-helm argo-rollouts chart, whose controller ConfigMap template copies
// controller.metricProviderPlugins into argo-rollouts-config (templates/controller/configmap.yaml).
// KargoImageExpression is the Kargo expression of the verified Freight's image of repo
// (docs.kargo.io expression functions: imageFrom(repoURL) returns the Freight's image, with RepoURL and
// Tag; Kargo v1.11.2 pkg/expressions/function/functions.go).
func KargoImageExpression(repo string) string {
	return `${{ imageFrom("` + repo + `").RepoURL }}:${{ imageFrom("` + repo + `").Tag }}`
}

func kargoValues(o KargoOptions) ([]byte, error) {
	controller, err := kargoController(o)
	if err != nil {
		return nil, err
	}
	usage := []string{"Values for the argo-helm argo-rollouts chart of the Rollouts controller that runs Kargo's verifications"}
	if o.RolloutsValues != nil {
		var names, flags []string
		for _, f := range o.RolloutsValues {
			names = append(names, f.Path)
			flags = append(flags, "-f "+f.Path)
		}
		usage = append(usage,
			"(on the Kargo control-plane cluster), layered after the values they were merged with:",
			"  helm upgrade --install argo-rollouts argo/argo-rollouts -n argo-rollouts "+strings.Join(flags, " ")+" -f "+KargoValuesFile,
			"Helm replaces a list by a later file's whole list: these lists are those of "+strings.Join(names, ", ")+" with",
			"analysis-health's entries merged in by name. Generate again from the release's values of the moment before each",
			"install (helm get values argo-rollouts -n argo-rollouts -o yaml), or the install drops what changed since.")
	} else {
		usage = append(usage,
			"(on the Kargo control-plane cluster), for a release without values of its own (--rollouts-values none):",
			"  helm upgrade --install argo-rollouts argo/argo-rollouts -n argo-rollouts -f "+KargoValuesFile,
			"Helm replaces a list by a later file's whole list: these lists hold analysis-health's entries alone and, layered",
			"after values of your own, would drop their plugins, init containers, volumes and mounts. With values of your",
			"own, generate with --rollouts-values FILE (docs/kargo.md).")
	}
	usage = append(usage, "The controller reads plugins only at start; the chart's checksum/cm annotation restarts it on a change.")
	switch {
	case o.KubeconfigSecret != "":
		usage = append(usage, "The plugin reads the Rollout with the kubeconfig Secret's identity: the workload cluster's RBAC governs what it may read.")
	case o.Project != "" && o.Namespace != "" && o.Project != o.Namespace:
		usage = append(usage, "args: the platform admin's policy lets the Stage's runs (in "+o.Project+") read the Rollout in "+o.Namespace+" (docs/security.md).")
	case o.Project == "" || o.Namespace == "":
		usage = append(usage, "A run reads a Rollout of its own namespace only: for a Stage whose Rollout is in another namespace, add to the item",
			"args: [--"+KargoAllowNamespacePairFlag+"=PROJECT_NAMESPACE=ROLLOUT_NAMESPACE], one a pair (docs/security.md).")
	}
	if o.PluginImage != "" {
		usage = append(usage, "The init container copies the plugin out of "+o.PluginImage+" (an image holding "+PluginImageBinary+",",
			"docs/kargo.md) into an emptyDir mounted at "+path.Dir(strings.TrimPrefix(o.PluginLocation, "file://"))+". The controller does not check sha256 for files: pin the image by digest.")
	} else if strings.HasPrefix(o.PluginLocation, "file://") {
		usage = append(usage, "A file:// location must exist in the controller's container: --plugin-image IMAGE adds the init container",
			"and volume that put it there (docs/kargo.md). The controller does not check sha256 for files.")
	}
	return docs(o.header(usage...), object{"controller": controller})
}

// kargoController is the values' controller map: the plugin item and, with a plugin image, the init
// container, volume and mount that carry it, each merged into the release's list (o.RolloutsValues).
func kargoController(o KargoOptions) (object, error) {
	item := object{"name": KargoPluginName, "location": o.PluginLocation}
	if o.PluginSHA256 != "" {
		item["sha256"] = o.PluginSHA256
	}
	// The plugin reads a Rollout of the run's own namespace with the controller's identity, and of another
	// only where its args allow the pair (rolloutplugin policy.go): the Stage's runs are in the Project
	// namespace. With a kubeconfig Secret the workload cluster's RBAC governs instead.
	if o.KubeconfigSecret == "" && o.Project != "" && o.Namespace != "" && o.Project != o.Namespace {
		item["args"] = []any{"--" + KargoAllowNamespacePairFlag + "=" + o.Project + "=" + o.Namespace}
	}
	var initContainer, volume, mount object
	if o.PluginImage != "" {
		// The init container copies the binary out of the image into the emptyDir the controller mounts at
		// the location's folder; the controller reads file:// plugins from there (utils/plugin/downloader.go
		// copyFile) and checks no sha256 for files, so the image reference pins the binary.
		file := strings.TrimPrefix(o.PluginLocation, "file://")
		mount = object{"name": KargoPluginVolume, "mountPath": path.Dir(file)}
		initContainer = object{
			"name":            KargoPluginVolume,
			"image":           o.PluginImage,
			"command":         []any{PluginImageBinary, "--copy-to", file},
			"volumeMounts":    []any{mount},
			"securityContext": object{"runAsNonRoot": true, "runAsUser": 65532, "readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false, "capabilities": object{"drop": []any{"ALL"}}},
		}
		volume = object{"name": KargoPluginVolume, "emptyDir": object{}}
	}
	if o.RolloutsValues == nil {
		controller := object{rolloutsMetricPlugins: []any{item}}
		if o.PluginImage != "" {
			controller[rolloutsInitContainers] = []any{initContainer}
			controller[rolloutsVolumes] = []any{volume}
			controller[rolloutsVolumeMounts] = []any{mount}
		}
		return controller, nil
	}
	rv, err := readRolloutsValues(o.RolloutsValues)
	if err != nil {
		return nil, err
	}
	controller := object{}
	if controller[rolloutsMetricPlugins], err = rv.mergeMetricPlugin(item); err != nil {
		return nil, err
	}
	// Without a plugin image the other lists are not written, so the release's stay as they are, unless
	// one holds the init container, volume or mount of ours that an earlier install with an image wrote:
	// they would copy a binary the controller no longer reads, so that list is written without it.
	if o.PluginImage == "" {
		for _, l := range []struct {
			key  string
			mine func(object) bool
		}{{rolloutsInitContainers, ourInitContainer}, {rolloutsVolumes, ourVolume}, {rolloutsVolumeMounts, func(object) bool { return true }}} {
			kept, removed, err := rv.without(l.key, KargoPluginVolume, l.mine)
			if err != nil {
				return nil, err
			}
			if removed {
				controller[l.key] = kept
			}
		}
		return controller, nil
	}
	if controller[rolloutsInitContainers], err = rv.mergeNamed(rolloutsInitContainers, initContainer, ourInitContainer, "the init container"); err != nil {
		return nil, err
	}
	if controller[rolloutsVolumes], err = rv.mergeNamed(rolloutsVolumes, volume, ourVolume, "the emptyDir volume"); err != nil {
		return nil, err
	}
	if controller[rolloutsVolumeMounts], err = rv.mergeVolumeMounts(mount); err != nil {
		return nil, err
	}
	return controller, nil
}

// KargoAllowNamespacePairFlag is the plugin's flag of the admin's namespace policy
// (rolloutplugin.AllowNamespacePairFlag; a test keeps the two equal).
const KargoAllowNamespacePairFlag = "allow-namespace-pair"

// KargoPluginVolume names the init container and the emptyDir volume that carry a file:// plugin.
const KargoPluginVolume = "analysis-health-plugin"

// PluginImageBinary is where a plugin image holds the binary (docs/kargo.md's image layout).
const PluginImageBinary = "/rollouts-plugin-metric-analysis-health"

// kargoRBAC is the Role the plugin's identity needs in the Rollout's namespace: read the Rollout and the
// runs and experiments of its revisions, nothing else. Single cluster: bound to the Rollouts controller's
// ServiceAccount (the chart's ClusterRole already grants this cluster-wide; the Role keeps a namespaced
// install working). Multi-cluster (a kubeconfig Secret): applied on the workload cluster, with a
// ServiceAccount whose bound, expiring token (TokenRequest) the kubeconfig carries: no
// kubernetes.io/service-account-token Secret, whose token never expires.
func kargoRBAC(o KargoOptions) ([]byte, error) {
	md := func(name string) object {
		m := object{"name": name, "labels": kargoLabels}
		if o.Namespace != "" {
			m["namespace"] = o.Namespace
		}
		return m
	}
	role := object{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "Role",
		"metadata":   md(KargoReaderRole),
		// exactly the requests the plugin makes: its direct reads (rolloutplugin read) get the Rollout,
		// list its revision's runs and experiments by label and get the runs an experiment names; its
		// watches (package watchcache) list and watch the three resources of the namespace.
		// test/rollouts/reliability TestReliability/LeastPrivilege removes each grant in turn.
		"rules": []any{
			object{"apiGroups": []any{"argoproj.io"}, "resources": []any{"rollouts"}, "verbs": []any{"get", "list", "watch"}},
			object{"apiGroups": []any{"argoproj.io"}, "resources": []any{"analysisruns"}, "verbs": []any{"get", "list", "watch"}},
			object{"apiGroups": []any{"argoproj.io"}, "resources": []any{"experiments"}, "verbs": []any{"list", "watch"}},
		},
	}
	where := "Apply in the Rollout's namespace" + inNamespace(o.Namespace) + " on the cluster the Rollout runs in."
	var subject object
	var extra []any
	if o.KubeconfigSecret != "" {
		sa := object{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": md(KargoReaderRole),
			// the plugin sends the token itself; no pod mounts it
			"automountServiceAccountToken": false}
		extra = append(extra, sa)
		subject = object{"kind": "ServiceAccount", "name": KargoReaderRole}
		if o.Namespace != "" {
			subject["namespace"] = o.Namespace
		}
		nsFlag := " -n " + o.Namespace
		if o.Namespace == "" {
			nsFlag = " -n ROLLOUT_NAMESPACE"
		}
		project := o.Project
		if project == "" {
			project = "PROJECT"
		}
		keyFlag := ""
		if o.KubeconfigKey != DefaultKargoKubeconfigKey {
			keyFlag = " --kubeconfig-key " + o.KubeconfigKey
		}
		where = "Apply on the workload cluster, in the Rollout's namespace" + inNamespace(o.Namespace) + ". Then write Secret " + o.KubeconfigSecret +
			" of the Kargo Project namespace,\n# a kubeconfig with a bound, expiring token of this ServiceAccount (TokenRequest), and apply it on the control plane:\n" +
			"#   analysis-health kubeconfig --kubeconfig-secret " + o.KubeconfigSecret + " --project " + project + keyFlag +
			" --token-from-serviceaccount " + strings.TrimPrefix(nsFlag, " -n ") + "/" + KargoReaderRole + " --context WORKLOAD | kubectl --context CONTROL_PLANE apply -f -\n" +
			"# Run it again before the token expires (docs/kargo.md#multi-cluster)."
	} else {
		ns, name, _ := strings.Cut(o.RolloutsServiceAccount, "/")
		subject = object{"kind": "ServiceAccount", "name": name, "namespace": ns}
	}
	binding := object{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "RoleBinding",
		"metadata":   md(KargoReaderRole),
		"roleRef":    object{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": KargoReaderRole},
		"subjects":   []any{subject},
	}
	return docs(o.header(
		"Least privilege for the analysis-health/rollout-analysis plugin: get, list and watch on rollouts and analysisruns,",
		"list and watch on experiments, nothing else; it never creates or changes an object. Without list or watch it",
		"reads every measurement directly and logs why.",
		where,
	), append(append(extra, role), binding)...)
}

func inNamespace(ns string) string {
	if ns == "" {
		return " (set metadata.namespace)"
	}
	return " " + ns
}
