// Package watchcache keeps, per cluster and per namespace that a verification names, informers (list +
// watch) of the Rollouts, AnalysisRuns and Experiments the plugin judges, so that a measurement can be
// answered without an API request. It only says whether its view is live; what may be answered from it
// is the plugin's rule (rolloutplugin judge).
//
// A view is live when all three informers have synced and each has a watch open that has delivered no
// error. The reflector retries a refused connection without telling anyone (client-go v0.29.3
// tools/cache/reflector.go watch, isWatchErrorRetriable), so the informers run on list and watch
// functions of this package that see every request's outcome and every event; a list or watch that
// fails, or a watch event of type Error (410 Gone among them), stops the namespace's informers with one
// logged reason, and the namespace is read directly until Options.Retry has passed.
package watchcache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// The resources watched, in the order of a space's informers.
var (
	Rollouts     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	AnalysisRuns = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysisruns"}
	Experiments  = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "experiments"}
	resources    = [...]schema.GroupVersionResource{Rollouts, AnalysisRuns, Experiments}
)

// VerificationRuns is the label by which the analysisruns informer leaves out Kargo's verification runs:
// Kargo labels each with its Stage (v1.11.2 pkg/rollouts/analysis_run_builder.go buildMetadata; every
// release has). They are the plugin's own measurements, never judged, and the analysis controller writes
// each of them every pollInterval: watched where they share the Rollout's namespace, every measurement
// came back to the plugin as an event to decode, and each run's measurement history stayed in memory. The runs the plugin judges, a Rollout's and its experiments',
// are never labelled so by Rollouts; a run the Rollout names that the view lacks is read directly
// (rolloutplugin readCached).
const VerificationRuns = "kargo.akuity.io/stage"

// unjudged is the analysisruns informer's label selector: every run but Kargo's verifications.
var unjudged = "!" + VerificationRuns

// Defaults of Options.
const (
	DefaultIdle  = 10 * time.Minute
	DefaultRetry = time.Minute
)

// Options configure a Cache.
type Options struct {
	// Idle: a namespace's informers stop when no measurement has asked for it for this long.
	Idle time.Duration
	// Retry: after a list or watch failed, the namespace is read directly for this long before its
	// informers start again.
	Retry time.Duration
	// Logf receives one line per failure; nil discards.
	Logf func(format string, a ...any)
}

// Cache holds the spaces; its zero value is not usable, New makes one.
type Cache struct {
	opts    Options
	mu      sync.Mutex
	spaces  map[key]*space
	janitor sync.Once
	closed  chan struct{}
}

type key struct{ cluster, namespace string }

// New returns an empty cache; informers start on the first View of a namespace.
func New(opts Options) *Cache {
	if opts.Idle <= 0 {
		opts.Idle = DefaultIdle
	}
	if opts.Retry <= 0 {
		opts.Retry = DefaultRetry
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	return &Cache{opts: opts, spaces: map[key]*space{}, closed: make(chan struct{})}
}

// space is one namespace of one cluster: its informers, or the time until which it is read directly.
type space struct {
	key      key
	where    string // the cluster, as messages name it
	stop     chan struct{}
	watched  [len(resources)]*watched
	lastUsed atomic.Int64 // unix nanoseconds
	// failed is set once, under Cache.mu, when a request of an informer failed; retryAt is then when
	// the namespace may be watched again.
	failed  bool
	retryAt time.Time
}

type watched struct {
	inf cache.SharedIndexInformer
	// open counts the watches that started and have neither ended nor delivered an error: the store is
	// current only while one is open (between two watches the reflector may be relisting or backing off).
	open atomic.Int32
}

// View is a live namespace's objects. They are shared with the informers: read them, never change them.
type View struct{ s *space }

// View returns the namespace's view if it is live. Otherwise it starts the namespace's informers (unless
// a failure's Retry has not passed) and reports false: the caller reads directly. newClient is called
// only to start informers; its client must not time out a request (a watch lasts minutes). where names
// the cluster in logged lines.
func (c *Cache) View(cluster, where string, newClient func() (dynamic.Interface, error), namespace string) (View, bool) {
	c.janitor.Do(func() { go c.sweep() })
	k := key{cluster, namespace}
	now := time.Now()
	c.mu.Lock()
	s := c.spaces[k]
	if s == nil || (s.failed && !now.Before(s.retryAt)) {
		client, err := newClient()
		if err != nil {
			c.mu.Unlock()
			return View{}, false
		}
		s = c.start(k, where, client)
		c.spaces[k] = s
	}
	failed := s.failed
	c.mu.Unlock()
	s.lastUsed.Store(now.UnixNano())
	if failed || !s.live() {
		return View{}, false
	}
	return View{s}, true
}

func (s *space) live() bool {
	for _, w := range s.watched {
		if !w.inf.HasSynced() || w.open.Load() <= 0 {
			return false
		}
	}
	return true
}

// start makes and runs a namespace's informers; called with c.mu held.
func (c *Cache) start(k key, where string, client dynamic.Interface) *space {
	s := &space{key: k, where: where, stop: make(chan struct{})}
	for i, gvr := range resources {
		w := &watched{}
		res := client.Resource(gvr).Namespace(k.namespace)
		what := gvr.Resource
		selector := ""
		if gvr == AnalysisRuns {
			selector = unjudged
		}
		lw := &cache.ListWatch{
			ListFunc: func(o metav1.ListOptions) (runtime.Object, error) {
				o.LabelSelector = selector
				l, err := res.List(context.Background(), o)
				if err != nil {
					c.fail(s, "list", what, err)
				}
				return l, err
			},
			WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = selector
				wi, err := res.Watch(context.Background(), o)
				if err != nil {
					c.fail(s, "watch", what, err)
					return nil, err
				}
				return c.track(s, w, what, wi), nil
			},
		}
		w.inf = cache.NewSharedIndexInformerWithOptions(lw, &unstructured.Unstructured{},
			cache.SharedIndexInformerOptions{ObjectDescription: gvr.String()})
		_ = w.inf.SetTransform(Transform)
		// what the wrapped functions above did not see (a watch that ended in a decoding error)
		_ = w.inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { c.fail(s, "watch", what, err) })
		s.watched[i] = w
		go w.inf.Run(s.stop)
	}
	return s
}

// track counts an open watch until its result channel ends or carries an Error event.
func (c *Cache) track(s *space, w *watched, what string, in watch.Interface) watch.Interface {
	w.open.Add(1)
	out := make(chan watch.Event)
	t := &tracked{in: in, out: out, stop: make(chan struct{})}
	go func() {
		defer close(out)
		counted := true
		done := func() {
			if counted {
				counted = false
				w.open.Add(-1)
			}
		}
		defer done()
		for ev := range in.ResultChan() {
			if ev.Type == watch.Error {
				done()
				c.fail(s, "watch", what, fmt.Errorf("%v", statusText(ev.Object)))
			}
			select {
			case out <- ev:
			case <-t.stop:
				return
			}
		}
	}()
	return t
}

type tracked struct {
	in   watch.Interface
	out  chan watch.Event
	once sync.Once
	stop chan struct{}
}

func (t *tracked) Stop() {
	t.once.Do(func() { close(t.stop) })
	t.in.Stop()
}

func (t *tracked) ResultChan() <-chan watch.Event { return t.out }

func statusText(o runtime.Object) string {
	if u, ok := o.(*unstructured.Unstructured); ok {
		if msg, _, _ := unstructured.NestedString(u.Object, "message"); msg != "" {
			code, _, _ := unstructured.NestedInt64(u.Object, "code")
			return fmt.Sprintf("%d %s", code, msg)
		}
	}
	if st, ok := o.(*metav1.Status); ok {
		return fmt.Sprintf("%d %s", st.Code, st.Message)
	}
	return fmt.Sprintf("%v", o)
}

// fail stops a space's informers after a failed request, once, with one logged line.
func (c *Cache) fail(s *space, verb, what string, err error) {
	c.mu.Lock()
	if s.failed {
		c.mu.Unlock()
		return
	}
	s.failed = true
	s.retryAt = time.Now().Add(c.opts.Retry)
	close(s.stop)
	c.mu.Unlock()
	c.opts.Logf("%s %s in namespace %s of %s failed: %s; reading directly, watching again in %s",
		verb, what, s.key.namespace, s.where, describe(verb, what, err), c.opts.Retry)
}

// describe is an error of a list or watch. A watch refused by RBAC comes back without the API server's
// message (the dynamic client does not decode a watch's error body: "unknown"), so the status names it.
func describe(verb, what string, err error) string {
	msg := err.Error()
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		if m := st.Status().Message; m != "" {
			msg = m
		}
	}
	switch {
	case apierrors.IsForbidden(err) && !strings.Contains(msg, "cannot "):
		return fmt.Sprintf("forbidden (RBAC: cannot %s resource %q): %s", verb, what, msg)
	case apierrors.IsUnauthorized(err):
		return "the credentials were rejected"
	}
	return msg
}

// sweep stops the informers of namespaces no measurement asked for in Idle.
func (c *Cache) sweep() {
	every := c.opts.Idle / 4
	if every < 100*time.Millisecond {
		every = 100 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.closed:
			return
		case now := <-t.C:
			c.mu.Lock()
			for k, s := range c.spaces {
				if now.Sub(time.Unix(0, s.lastUsed.Load())) < c.opts.Idle {
					continue
				}
				if !s.failed {
					close(s.stop)
				}
				delete(c.spaces, k)
			}
			c.mu.Unlock()
		}
	}
}

// Close stops every informer.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.closed:
		return
	default:
	}
	close(c.closed)
	for k, s := range c.spaces {
		if !s.failed {
			s.failed = true
			close(s.stop)
		}
		delete(c.spaces, k)
	}
}

// Namespaces is how many namespaces have informers running (tests, the report).
func (c *Cache) Namespaces() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.spaces {
		if !s.failed {
			n++
		}
	}
	return n
}

// Rollout is the named Rollout, if the view holds it.
func (v View) Rollout(name string) (map[string]any, bool) {
	return v.get(0, name)
}

// AnalysisRun is the named run, if the view holds it (never a verification run: VerificationRuns).
func (v View) AnalysisRun(name string) (map[string]any, bool) {
	return v.get(1, name)
}

// Experiment is the named experiment, if the view holds it.
func (v View) Experiment(name string) (map[string]any, bool) {
	return v.get(2, name)
}

func (v View) get(i int, name string) (map[string]any, bool) {
	obj, ok, err := v.s.watched[i].inf.GetStore().GetByKey(v.s.key.namespace + "/" + name)
	if err != nil || !ok {
		return nil, false
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, false
	}
	return u.Object, true
}

// AnalysisRuns are the runs whose labels match sel.
func (v View) AnalysisRuns(sel labels.Selector) []map[string]any { return v.list(1, sel) }

// Experiments are the experiments whose labels match sel.
func (v View) Experiments(sel labels.Selector) []map[string]any { return v.list(2, sel) }

func (v View) list(i int, sel labels.Selector) []map[string]any {
	out := []map[string]any{}
	for _, obj := range v.s.watched[i].inf.GetStore().List() {
		u, ok := obj.(*unstructured.Unstructured)
		if ok && sel.Matches(labels.Set(u.GetLabels())) {
			out = append(out, u.Object)
		}
	}
	return out
}

// Transform is what the informers store of an object: without managedFields and kubectl's
// last-applied-configuration (a copy of the whole object), and a Rollout's pod template reduced to the
// images of its containers and init containers, the only part of it the judgement reads
// (verdict podImages; the Rollout script reads no field of spec.template).
func Transform(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	u.SetManagedFields(nil)
	if ann := u.GetAnnotations(); ann != nil {
		if _, ok := ann["kubectl.kubernetes.io/last-applied-configuration"]; ok {
			delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
			u.SetAnnotations(ann)
		}
	}
	if u.GetKind() != "Rollout" {
		return u, nil
	}
	spec, _ := u.Object["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	if tmpl == nil {
		return u, nil
	}
	podSpec, _ := tmpl["spec"].(map[string]any)
	slim := map[string]any{}
	for _, field := range []string{"containers", "initContainers"} {
		cs, _ := podSpec[field].([]any)
		var keep []any
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			if cm == nil {
				continue
			}
			k := map[string]any{}
			for _, f := range []string{"name", "image"} {
				if x, ok := cm[f]; ok {
					k[f] = x
				}
			}
			keep = append(keep, k)
		}
		if keep != nil {
			slim[field] = keep
		}
	}
	spec["template"] = map[string]any{"spec": slim}
	return u, nil
}
