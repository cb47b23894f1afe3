// Package rolloutplugin is the Argo Rollouts metric-provider plugin analysis-health/rollout-analysis: a
// measurement that reads a Rollout, and the AnalysisRuns and Experiments its controller created for one
// revision, and returns their verdict (package verdict, which runs our bundled Lua), so that a Kargo
// Stage's verification shows the Rollout's own analysis instead of running it a second time.
//
// It is read-only: it only gets, lists and watches. The Rollouts analysis controller calls plugins without any
// deadline (metricproviders/plugin/rpc net/rpc Client.Call), so every API call here has a timeout, and
// nothing a later call could recover from makes InitPlugin fail: the controller never calls it again
// (metricproviders/plugin/client/client.go startPluginSystem). Paths are relative to
// github.com/argoproj/argo-rollouts@v1.8.5; the plugin API is identical in v1.10.2.
package rolloutplugin

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/plugin/types"
	goPlugin "github.com/hashicorp/go-plugin"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/analysis-health/analysis-health/internal/plugin/analysisruns"
	"github.com/analysis-health/analysis-health/internal/plugin/redact"
	"github.com/analysis-health/analysis-health/internal/plugin/remote"
	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
	"github.com/analysis-health/analysis-health/internal/plugin/watchcache"
)

// Handshake is the Rollouts controller's handshake for metric-provider plugins
// (metricproviders/plugin/client/client.go handshakeConfig).
var Handshake = goPlugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "ARGO_ROLLOUTS_RPC_PLUGIN",
	MagicCookieValue: "metricprovider",
}

// PluginMapKey is the key the controller dispenses the plugin under.
const PluginMapKey = "RpcMetricProviderPlugin"

// Resources read.
var (
	rolloutsGVR     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	analysisRunsGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysisruns"}
	experimentsGVR  = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "experiments"}
	secretsGVR      = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// maxListed bounds one list call: a namespace holds a handful of runs per revision.
const maxListed = 500

// Options configure the plugin process.
type Options struct {
	// Kubeconfig is the controller cluster's kubeconfig file; empty: $KUBECONFIG, ~/.kube/config, then
	// the pod's in-cluster config (the Rollouts controller's service account: the plugin runs in its pod).
	Kubeconfig string
	// Local, if set, replaces the client of the controller's own cluster (tests).
	Local func() (dynamic.Interface, error)
	// Remote, if set, replaces building a client from a kubeconfig Secret (tests).
	Remote func(kubeconfig []byte, timeout time.Duration) (dynamic.Interface, error)
	// Now defaults to time.Now.
	Now func() time.Time
	// Log receives one line per problem (the controller re-logs plugin stderr); nil discards.
	Log io.Writer
	// Watch, if set, answers a measurement whose verdict is Running from watches of the namespace
	// (package watchcache) instead of reading it; nil reads every time. The command sets it.
	Watch *watchcache.Options
	// LocalWatch, if set, replaces the client the watches of the controller's own cluster use (tests);
	// with Local and without it, the watches use Local's client.
	LocalWatch func() (dynamic.Interface, error)
	// AllowNamespacePairs is the platform admin's policy (policy.go): runs of a pair's Run namespace may
	// read Rollouts of its Rollout namespace with the controller's identity. A run always reads its own.
	AllowNamespacePairs []NamespacePair
}

// Plugin implements the Rollouts MetricProviderPlugin interface (metricproviders/plugin/rpc/rpc.go).
type Plugin struct {
	opts Options

	mu         sync.Mutex
	local      dynamic.Interface
	localWatch func() (dynamic.Interface, error)
	cache      *watchcache.Cache
	memo       memo // Running verdicts judged from the watches (memo.go)
	pairs      map[NamespacePair]bool
}

// New returns the plugin.
func New(opts Options) *Plugin {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	p := &Plugin{opts: opts, pairs: map[NamespacePair]bool{}}
	for _, pair := range opts.AllowNamespacePairs {
		p.pairs[pair] = true
	}
	if opts.Watch != nil {
		wo := *opts.Watch
		if wo.Logf == nil {
			wo.Logf = p.logf
		}
		p.cache = watchcache.New(wo)
	}
	return p
}

// InitPlugin succeeds: the cluster client is built on first use, so a controller that starts before the
// API server is reachable, or a missing kubeconfig, is reported by the measurement that needs it and
// retried by the next one.
func (p *Plugin) InitPlugin() types.RpcError { return types.RpcError{} }

// Type names the provider.
func (p *Plugin) Type() string { return "RolloutAnalysis" }

// GarbageCollect succeeds: the plugin keeps no state outside the measurements themselves, and an error
// here would stop the controller from trimming the measurement history (analysis/analysis.go
// garbageCollectMeasurements).
func (p *Plugin) GarbageCollect(*v1alpha1.AnalysisRun, v1alpha1.Metric, int) types.RpcError {
	return types.RpcError{}
}

// GetMetadata names the provider only. It gets the metric after argument substitution but not the run,
// so it cannot tell Secret-sourced values in the config from others; the measurements carry the rest.
func (p *Plugin) GetMetadata(v1alpha1.Metric) map[string]string {
	return map[string]string{"provider": Name}
}

// Run takes a measurement: the verdict now, and if it is Running a ResumeAt so the controller comes back.
// After an Error the controller starts a new measurement with Run, not Resume (analysis/analysis.go
// runMeasurements): the revision an earlier measurement of the run pinned is still the one judged.
func (p *Plugin) Run(run *v1alpha1.AnalysisRun, metric v1alpha1.Metric) v1alpha1.Measurement {
	now := metav1.NewTime(p.opts.Now())
	return p.measure(run, metric, v1alpha1.Measurement{StartedAt: &now, Metadata: earlierPin(run, metric.Name)})
}

// earlierPin is the pin of the run's latest measurement of the metric that holds one.
func earlierPin(run *v1alpha1.AnalysisRun, metric string) map[string]string {
	if run == nil {
		return nil
	}
	for _, mr := range run.Status.MetricResults {
		if mr.Name != metric {
			continue
		}
		for i := len(mr.Measurements) - 1; i >= 0; i-- {
			if pin := verdict.PinFromMetadata(mr.Measurements[i].Metadata); pin != nil {
				return pin.Metadata()
			}
		}
	}
	return nil
}

// Resume judges again; the measurement keeps its start time.
func (p *Plugin) Resume(run *v1alpha1.AnalysisRun, metric v1alpha1.Metric, m v1alpha1.Measurement) v1alpha1.Measurement {
	if m.StartedAt == nil {
		now := metav1.NewTime(p.opts.Now())
		m.StartedAt = &now
	}
	return p.measure(run, metric, m)
}

// Terminate ends an in-flight measurement (the run was terminated: Kargo's abort, or another metric
// decided it). Successful is what the controller expects from a terminated measurement (it then records
// "Metric Terminated"); the verdict so far stays in the value.
func (p *Plugin) Terminate(_ *v1alpha1.AnalysisRun, _ v1alpha1.Metric, m v1alpha1.Measurement) v1alpha1.Measurement {
	now := metav1.NewTime(p.opts.Now())
	m.Phase = v1alpha1.AnalysisPhaseSuccessful
	m.Message = "terminated before a verdict was reached"
	m.FinishedAt = &now
	m.ResumeAt = nil
	return m
}

func (p *Plugin) measure(run *v1alpha1.AnalysisRun, metric v1alpha1.Metric, m v1alpha1.Measurement) (out v1alpha1.Measurement) {
	// every text the measurement and the log get passes through rd first (package redact)
	rd := &redact.Redactor{}
	defer func() {
		if r := recover(); r != nil {
			out = p.finish(m, v1alpha1.AnalysisPhaseError, rd.String(fmt.Sprintf("internal error: %v", r)))
		}
	}()
	if run == nil {
		return p.finish(m, v1alpha1.AnalysisPhaseError, "no AnalysisRun given")
	}
	// Secret-sourced arguments arrive resolved in the run (analysis/analysis.go resolveArgs) and may have
	// been templated into the config; they must not reach the value, message or log.
	for _, a := range run.Spec.Args {
		if a.ValueFrom != nil && a.ValueFrom.SecretKeyRef != nil && a.Value != nil {
			rd.Add(*a.Value)
		}
	}
	cfg, err := ParseConfig(configOf(metric))
	if err != nil {
		p.logRedacted(rd, "AnalysisRun %s/%s metric %q: %s", run.Namespace, run.Name, metric.Name, err)
		return p.finish(m, v1alpha1.AnalysisPhaseError, rd.String(err.Error()))
	}
	pin := verdict.PinFromMetadata(m.Metadata)
	// The controller calls plugins without a deadline: the whole measurement has one.
	ctx, cancel := context.WithTimeout(context.Background(), MeasurementTimeout(cfg.apiTimeout))
	defer cancel()
	// The first measurement reads directly: the revision it pins must be the one the Rollout delivers
	// now, not the one a watch last delivered. A config that holds a Secret's value is never watched:
	// the watches are shared by every run and log their namespace.
	watch := p.cache != nil && !holdsSecret(cfg, rd)
	v, err := p.judge(ctx, cfg, run.Namespace, pin, !watch || pin == nil, watch, rd)
	if err != nil {
		// the whole line: a Secret's value may name the run's own namespace too
		p.logRedacted(rd, "AnalysisRun %s/%s metric %q: %s", run.Namespace, run.Name, metric.Name, err)
		return p.finish(m, v1alpha1.AnalysisPhaseError, rd.String(err.Error()))
	}
	// the verdict redacted its texts before cutting them; this pass keeps the value a JSON document
	m.Value = rd.JSON(v.Value)
	m.Message = rd.String(v.Message)
	// The pin goes back to the controller with the measurement, which returns it on every Resume; the
	// structured verdict goes with it, for tools (the value is words, for people).
	if md := v.Metadata(); md != nil {
		if m.Metadata == nil {
			m.Metadata = map[string]string{}
		}
		for k, x := range md {
			if k == verdict.MetadataVerdict {
				m.Metadata[k] = rd.JSON(x) // a JSON document, kept one
			} else {
				m.Metadata[k] = rd.String(x)
			}
		}
	}
	phase := v1alpha1.AnalysisPhase(v.Phase)
	if phase == v1alpha1.AnalysisPhaseRunning {
		m.Phase = phase
		resume := metav1.NewTime(p.opts.Now().Add(cfg.pollInterval))
		m.ResumeAt = &resume
		m.FinishedAt = nil
		return m
	}
	return p.finish(m, phase, m.Message)
}

// finish completes a measurement; a value is always a JSON string, for Kargo's UI parses it
// (verdict.ErrorValue for an Error, with the structured verdict in the metadata).
func (p *Plugin) finish(m v1alpha1.Measurement, phase v1alpha1.AnalysisPhase, msg string) v1alpha1.Measurement {
	now := metav1.NewTime(p.opts.Now())
	m.Phase, m.Message, m.ResumeAt, m.FinishedAt = phase, msg, nil, &now
	if phase == v1alpha1.AnalysisPhaseError {
		var structured string
		m.Value, structured = verdict.ErrorValue(msg)
		if m.Metadata == nil {
			m.Metadata = map[string]string{}
		}
		m.Metadata[verdict.MetadataVerdict] = structured
	}
	return m
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func (p *Plugin) logf(format string, a ...any) {
	fmt.Fprintf(p.opts.Log, "analysis-health/rollout-analysis: "+format+"\n", a...)
}

// logRedacted logs a line of a measurement: formatted first, then redacted whole, so that no verb's
// quoting or escaping of an argument hides a Secret's value from the Redactor.
func (p *Plugin) logRedacted(rd *redact.Redactor, format string, a ...any) {
	p.logf("%s", rd.String(fmt.Sprintf(format, a...)))
}

// judge reads the objects and decides; unless direct, from the namespace's watches when they are live.
// A verdict other than Running from the watches is judged again from a direct read (docs/kargo.md, "Reads
// served from watches"). It adds the secrets of a kubeconfig Secret to rd.
func (p *Plugin) judge(ctx context.Context, cfg Config, runNamespace string, pin *verdict.Pin, direct, watch bool, rd *redact.Redactor) (verdict.Verdict, error) {
	if err := p.allowed(cfg, runNamespace); err != nil {
		return verdict.Verdict{}, err
	}
	local, err := p.localClient()
	if err != nil {
		return verdict.Verdict{}, fmt.Errorf("cannot build a client for the Rollouts controller's cluster: %v", err)
	}
	client := local
	where := site{name: "the Rollouts controller's cluster"}
	cluster := watchcache.Cluster{ID: "local", Where: where.name, Client: p.localWatch, AllNamespaces: true}
	if s := cfg.KubeconfigSecret; s != nil {
		kubeconfig, err := p.secretValue(ctx, local, runNamespace, *s, cfg.apiTimeout)
		if err != nil {
			return verdict.Verdict{}, err
		}
		rd.Include(kubeconfigRedactor(kubeconfig))
		if client, err = p.remoteClient(kubeconfig, cfg.apiTimeout); err != nil {
			return verdict.Verdict{}, fmt.Errorf("Secret %s/%s key %q: %v", runNamespace, s.Name, s.Key, err)
		}
		where = site{name: fmt.Sprintf("the cluster of the kubeconfig in Secret %s/%s", runNamespace, s.Name), remote: true,
			secret: secretRef{namespace: runNamespace, name: s.Name, key: s.Key, rolloutNamespace: cfg.Namespace, kubeconfig: kubeconfig}}
		// a changed Secret is another cluster identity: the old one's watches go idle
		// rbac.yaml's reader of the workload cluster may read its namespace alone: watched per namespace
		cluster = watchcache.Cluster{ID: fmt.Sprintf("secret %s/%s %x", runNamespace, s.Name, sha256.Sum256(kubeconfig)),
			Where: where.name, Client: func() (dynamic.Interface, error) { return p.remoteClient(kubeconfig, 0) }}
	}
	var objs verdict.Objects
	cached := false
	// a direct measurement starts the watches too, so that the next one can be served from them
	if watch {
		if view, ok := p.cache.View(cluster, cfg.Namespace); ok && !direct {
			objs, cached = readCached(view, cfg, pin)
		}
	}
	if !cached {
		if objs, err = read(ctx, client, cfg, where, pin); err != nil {
			return verdict.Verdict{}, err
		}
	}
	opts := verdict.Options{
		Revision:             cfg.Revision,
		Image:                cfg.Image,
		Pin:                  pin,
		InconclusiveDegraded: strings.EqualFold(cfg.Inconclusive, "degraded"),
		NoAnalysis:           noAnalysis(ctx, client, cfg, where),
		Redact:               rd,
	}
	key, slot := "", ""
	if cached {
		if key = memoKey(cluster.ID, objs, opts); key != "" {
			slot = memoSlot(cluster.ID, objs)
			if v, ok := p.memo.get(slot, key); ok {
				return v, nil
			}
		}
	}
	v, err := verdict.Judge(objs, opts)
	if cached && (err != nil || v.Phase != verdict.Running) {
		return p.judge(ctx, cfg, runNamespace, pin, true, watch, rd)
	}
	if key != "" && err == nil {
		p.memo.put(slot, key, v)
	}
	return v, err
}

func (p *Plugin) localClient() (dynamic.Interface, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.local != nil {
		return p.local, nil
	}
	var c dynamic.Interface
	var err error
	var w func() (dynamic.Interface, error)
	if p.opts.Local != nil {
		c, err = p.opts.Local()
		w = func() (dynamic.Interface, error) { return c, nil }
		if p.opts.LocalWatch != nil {
			w = p.opts.LocalWatch
		}
	} else {
		var watch dynamic.Interface
		c, watch, err = localClient(p.opts.Kubeconfig)
		w = func() (dynamic.Interface, error) { return watch, nil }
	}
	if err != nil {
		return nil, err // not kept: the next measurement tries again
	}
	p.local, p.localWatch = c, w
	return c, nil
}

// configOf is the metric's config for the plugin: under its name, or, when an admin registered the plugin
// under another name in argo-rollouts-config (a second item with other args, such as --watch=false), the
// metric's one plugin entry — the controller calls a plugin only for metrics whose one entry names it
// (Argo Rollouts metricproviders/plugin/client/client.go: one plugin a metric).
func configOf(metric v1alpha1.Metric) json.RawMessage {
	if raw, ok := metric.Provider.Plugin[Name]; ok || len(metric.Provider.Plugin) != 1 {
		return raw
	}
	for _, raw := range metric.Provider.Plugin {
		return raw
	}
	return nil
}

// localClient builds two clients of the controller's cluster: one whose requests time out, for reads,
// and one whose requests do not, for watches (rest.Config.Timeout bounds a whole response, and a watch is
// a response of minutes).
func localClient(path string) (dynamic.Interface, dynamic.Interface, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, nil, err
	}
	cfg.QPS, cfg.Burst = ClientQPS, ClientBurst
	watch, err := dynamic.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, nil, err
	}
	cfg.Timeout = DefaultAPITimeout
	c, err := dynamic.NewForConfig(cfg)
	return c, watch, err
}

// ClientQPS and ClientBurst bound the plugin's requests to one cluster. client-go's defaults (5 per second,
// bursts of 10) are below what 200 verifications in flight ask for at the default pollInterval (about 3
// reads each per 10 s): its rate limiter then holds requests past apiTimeout and the measurements are
// Error (docs/reliability.md). The API server's priority and fairness still protects it.
const (
	ClientQPS   = 100
	ClientBurst = 200
)

func (p *Plugin) remoteClient(kubeconfig []byte, timeout time.Duration) (dynamic.Interface, error) {
	if p.opts.Remote != nil {
		return p.opts.Remote(kubeconfig, timeout)
	}
	return RemoteClient(kubeconfig, timeout)
}

// RemoteClient builds a client from kubeconfig bytes, whose requests time out after timeout (0: never, for
// watches). The kubeconfig is checked and read as data (package remote): nothing in it runs, reads a file or
// connects before it is accepted, an answer over MaxRemoteResponse is refused and no redirect is followed.
func RemoteClient(kubeconfig []byte, timeout time.Duration) (dynamic.Interface, error) {
	return remote.NewClient(kubeconfig, remote.Options{Timeout: timeout, QPS: ClientQPS, Burst: ClientBurst})
}

func (p *Plugin) secretValue(parent context.Context, c dynamic.Interface, ns string, s SecretKey, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	obj, err := c.Resource(secretsGVR).Namespace(ns).Get(ctx, s.Name, metav1.GetOptions{})
	if err != nil {
		return nil, apiError(err, fmt.Sprintf("Secret %s/%s", ns, s.Name), site{name: "the Rollouts controller's cluster"}, timeout)
	}
	data, _ := obj.Object["data"].(map[string]any)
	enc, ok := data[s.Key].(string)
	if !ok {
		return nil, fmt.Errorf("Secret %s/%s has no key %q", ns, s.Name, s.Key)
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("Secret %s/%s key %q is not base64", ns, s.Name, s.Key)
	}
	return raw, nil
}

// read gets the Rollout and lists the runs and experiments of its namespace that carry a pod-template
// hash (all the rollout controller creates do), and the runs the experiments own.
func read(parent context.Context, c dynamic.Interface, cfg Config, where site, pin *verdict.Pin) (verdict.Objects, error) {
	ctx, cancel := context.WithTimeout(parent, cfg.apiTimeout)
	defer cancel()
	var objs verdict.Objects
	what := fmt.Sprintf("Rollout %s/%s", cfg.Namespace, cfg.Name)
	ro, err := c.Resource(rolloutsGVR).Namespace(cfg.Namespace).Get(ctx, cfg.Name, metav1.GetOptions{})
	if err != nil {
		return objs, apiError(err, what, where, cfg.apiTimeout)
	}
	objs.Rollout = ro.Object
	selector := verdict.LabelPodTemplateHash
	revision := cfg.Revision
	if pin != nil {
		revision = pin.Hash
	}
	if hash := currentHash(ro.Object, revision); hash != "" {
		selector += "=" + hash
	}
	list := func(gvr schema.GroupVersionResource, sel string) ([]map[string]any, error) {
		l, err := c.Resource(gvr).Namespace(cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel, Limit: maxListed})
		if err != nil {
			return nil, apiError(err, gvr.Resource+" of "+what, where, cfg.apiTimeout)
		}
		out := make([]map[string]any, 0, len(l.Items))
		for _, it := range l.Items {
			out = append(out, it.Object)
		}
		return out, nil
	}
	if objs.AnalysisRuns, err = list(analysisRunsGVR, selector); err != nil {
		return objs, err
	}
	if objs.Experiments, err = list(experimentsGVR, selector); err != nil {
		return objs, err
	}
	// An experiment's runs carry no hash label (experiments/experiment.go); the experiment lists them.
	for _, e := range objs.Experiments {
		st, _ := e["status"].(map[string]any)
		runs, _ := st["analysisRuns"].([]any)
		for _, r := range runs {
			rm, _ := r.(map[string]any)
			name, _ := rm["analysisRun"].(string)
			if name == "" {
				continue
			}
			ar, err := c.Resource(analysisRunsGVR).Namespace(cfg.Namespace).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue // deleted meanwhile; the experiment's own status still records its verdict
			}
			if err != nil {
				return objs, apiError(err, "AnalysisRun "+cfg.Namespace+"/"+name, where, cfg.apiTimeout)
			}
			objs.AnalysisRuns = append(objs.AnalysisRuns, ar.Object)
		}
	}
	return objs, nil
}

// readCached is read's answer from a live view; false if the view lacks the Rollout (the direct read
// then says whether it exists).
func readCached(v watchcache.View, cfg Config, pin *verdict.Pin) (verdict.Objects, bool) {
	var objs verdict.Objects
	ro, ok := v.Rollout(cfg.Name)
	if !ok {
		return objs, false
	}
	// A run or experiment the Rollout names that the watches have not delivered yet (or leave out) is
	// read directly: a view without it could say Running for longer than the cluster does. (One deleted
	// while still named costs a direct read a measurement until the Rollout's status moves on.)
	for typ, name := range analysisruns.StatusRefs(ro) {
		held := false
		if typ == analysisruns.Experiment {
			_, held = v.Experiment(name)
		} else {
			_, held = v.AnalysisRun(name)
		}
		if !held {
			return objs, false
		}
	}
	objs.Rollout = ro
	selector := verdict.LabelPodTemplateHash
	revision := cfg.Revision
	if pin != nil {
		revision = pin.Hash
	}
	if hash := currentHash(ro, revision); hash != "" {
		selector += "=" + hash
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return objs, false
	}
	objs.AnalysisRuns = v.AnalysisRuns(sel)
	objs.Experiments = v.Experiments(sel)
	for _, e := range objs.Experiments {
		st, _ := e["status"].(map[string]any)
		runs, _ := st["analysisRuns"].([]any)
		for _, r := range runs {
			rm, _ := r.(map[string]any)
			name, _ := rm["analysisRun"].(string)
			if name == "" {
				continue
			}
			ar, ok := v.AnalysisRun(name)
			if !ok {
				return objs, false
			}
			objs.AnalysisRuns = append(objs.AnalysisRuns, ar)
		}
	}
	return objs, true
}

// currentHash is the hash whose runs are needed, when it is known before listing: the revision asked
// for names the current one (or is a hash), or none was asked for.
func currentHash(ro map[string]any, revision string) string {
	st, _ := ro["status"].(map[string]any)
	md, _ := ro["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	current, _ := st["currentPodHash"].(string)
	rev, _ := ann[verdict.AnnotationRevision].(string)
	switch {
	case revision == "" || revision == rev:
		return current
	case isNumber(revision):
		return "" // a revision number other than the current one: find its hash among all runs
	}
	return revision
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// site is the cluster a read goes to, as messages name it. A remote one is whatever server a Secret
// names: its answers are not quoted, beyond their HTTP status.
type site struct {
	name   string
	remote bool
	secret secretRef // the kubeconfig Secret a remote site's credentials come from
}

// secretRef is a kubeconfig Secret, for the message that says how to renew its credentials.
type secretRef struct {
	namespace, name, key, rolloutNamespace string
	kubeconfig                             []byte
}

// rejected is the message of a 401 from the cluster of a kubeconfig Secret: its token expired, was
// revoked or its ServiceAccount deleted (or its client certificate is no longer trusted). Nothing
// the controller retries can change that; renewing the Secret can, and the next measurement reads it.
func (s secretRef) rejected(what, where string, err error) error {
	cred, why, renew := "the token", "expired, revoked, or its ServiceAccount deleted", fmt.Sprintf("renew it with `analysis-health kubeconfig --kubeconfig-secret %s --project %s", s.name, s.namespace)
	if s.key != "kubeconfig" {
		renew += " --kubeconfig-key " + s.key
	}
	renew += fmt.Sprintf(" --token-from-serviceaccount %s/analysis-health-rollout-reader` (with the workload cluster's kubeconfig) and apply it; the next measurement reads the new one (docs/kargo.md#multi-cluster)", s.rolloutNamespace)
	if c, cerr := remote.Config(s.kubeconfig); cerr == nil && c.BearerToken == "" {
		cred, why = "the client certificate", "expired or no longer trusted"
		renew = "renew the certificate in the kubeconfig (docs/kargo.md#multi-cluster)"
	}
	return fmt.Errorf("%s: %s in Secret %s/%s key %q was rejected by %s (%s: %s): %s",
		what, cred, s.namespace, s.name, s.key, where, statusLine(err), why, renew)
}

// apiError turns a client error into a message naming the object, the cluster and the cause.
func apiError(err error, what string, where site, timeout time.Duration) error {
	var netErr net.Error
	var urlErr *url.Error
	var st apierrors.APIStatus
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s not found in %s", what, where.name)
	case apierrors.IsForbidden(err) && where.remote:
		return fmt.Errorf("%s: access denied in %s (%s; the remote cluster's RBAC of the kubeconfig's identity: it needs get, list and watch on rollouts, get, list and watch on analysisruns, list and watch on experiments)", what, where.name, statusLine(err))
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: access denied in %s (RBAC: the plugin needs get, list and watch on rollouts, get, list and watch on analysisruns, list and watch on experiments, and get on the kubeconfig Secret): %v", what, where.name, apiMessage(err))
	case apierrors.IsUnauthorized(err) && where.secret.name != "":
		return where.secret.rejected(what, "its cluster", err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%s: the credentials for %s were rejected", what, where.name)
	case errors.Is(err, ErrResponseTooLarge):
		return fmt.Errorf("%s: %s: %v", what, where.name, ErrResponseTooLarge)
	// client-go's rate limiter refuses a request it could not send before the deadline without wrapping
	// context.DeadlineExceeded (rest/request.go tryThrottle, golang.org/x/time/rate Limiter.Wait)
	case errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) || (errors.As(err, &netErr) && netErr.Timeout()) ||
		strings.Contains(err.Error(), "would exceed context deadline"):
		return fmt.Errorf("%s: %s did not answer within %s", what, where.name, timeout)
	case errors.As(err, &urlErr):
		return fmt.Errorf("%s: cannot reach %s: %s", what, where.name, reachWords(urlErr.Err))
	case where.remote && errors.As(err, &st):
		return fmt.Errorf("%s: reading from %s failed: %s", what, where.name, statusLine(err))
	case where.remote:
		// client-go quotes an answer it cannot decode (an unstructured error body, a missing kind)
		return fmt.Errorf("%s: reading from %s failed: its answer is not a Kubernetes API response", what, where.name)
	}
	return fmt.Errorf("%s: reading from %s failed: %v", what, where.name, err)
}

// reachWords says why a connection failed, in words of the plugin's where Go's quote the server: a
// certificate's names (x509's HostnameError lists every name the server's certificate holds, text the
// server chose) or its issuer's. Other failures are the dialer's, about the address the kubeconfig names.
func reachWords(err error) string {
	var (
		name    x509.HostnameError
		unknown x509.UnknownAuthorityError
		invalid x509.CertificateInvalidError
		verify  *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &name):
		return "the server's certificate is not valid for the server name in the kubeconfig"
	case errors.As(err, &unknown):
		return "the server's certificate is not signed by the kubeconfig's certificate-authority-data"
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return "the server's certificate has expired or is not yet valid"
	case errors.As(err, &invalid), errors.As(err, &verify):
		return "the server's certificate failed verification"
	}
	return clip(err.Error(), 200)
}

// statusLine is an API error's HTTP status alone, without the server's message.
func statusLine(err error) string { return remote.StatusLine(err) }

func apiMessage(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return st.Status().Message
	}
	return err.Error()
}

// holdsSecret says whether the config's Rollout is named by a Secret's value.
func holdsSecret(cfg Config, rd *redact.Redactor) bool {
	return rd.Redacts(cfg.Namespace) || rd.Redacts(cfg.Name)
}

// ensure the interfaces match the controller's.
var _ interface {
	InitPlugin() types.RpcError
	types.RpcMetricProvider
} = (*Plugin)(nil)
