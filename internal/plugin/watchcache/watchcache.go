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
	"encoding/json"
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
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

// The resources watched, in the order of a space's informers.
var (
	Rollouts     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	AnalysisRuns = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysisruns"}
	Experiments  = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "experiments"}
	resources    = [...]schema.GroupVersionResource{Rollouts, AnalysisRuns, Experiments}
	kinds        = [...]string{"Rollout", "AnalysisRun", "Experiment"}
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
	watched  [len(resources)]atomic.Pointer[watched]
	lastUsed atomic.Int64 // unix nanoseconds
	client   dynamic.Interface
	// wanted are the Rollouts measurements asked for, each with the value of asked when it was first
	// asked for: the rollouts informer keeps only those (transform), and a Rollout asked for after the
	// informer started (since > watched.since) makes it list again (View.Rollout).
	mu     sync.Mutex
	wanted map[string]int64
	asked  int64
	// failed is set once, under Cache.mu, when a request of an informer failed; retryAt is then when
	// the namespace may be watched again.
	failed  bool
	retryAt time.Time
}

type watched struct {
	inf  cache.SharedIndexInformer
	stop chan struct{} // this informer's alone (a restart), beside the space's
	// since is space.asked when the informer started: it keeps every Rollout wanted until then
	since int64
	// open counts the watches that started and have neither ended nor delivered an error: the store is
	// current only while one is open (between two watches the reflector may be relisting or backing off).
	open atomic.Int32
}

// View is a live namespace's objects. They are shared with the informers: read them, never change them.
type View struct {
	c *Cache
	s *space
}

// View returns the namespace's view if it is live. Otherwise it starts the namespace's informers (unless
// a failure's Retry has not passed) and reports false: the caller reads directly. newClient is called
// only to start informers; its client must not time out a request (a watch lasts minutes). where names
// the cluster in logged lines. rollout is the Rollout the caller will read: of the namespace's Rollouts
// the view holds those asked for (the others of a namespace of many are never judged).
func (c *Cache) View(cluster, where string, newClient func() (dynamic.Interface, error), namespace, rollout string) (View, bool) {
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
		s = &space{key: k, where: where, stop: make(chan struct{}), client: client, wanted: map[string]int64{}}
		s.want(rollout)
		c.start(s)
		c.spaces[k] = s
	}
	failed := s.failed
	c.mu.Unlock()
	s.want(rollout)
	s.lastUsed.Store(now.UnixNano())
	if failed || !s.live() {
		return View{}, false
	}
	return View{c, s}, true
}

// want adds a Rollout to those the space keeps.
func (s *space) want(rollout string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.wanted[rollout]; !ok {
		s.asked++
		s.wanted[rollout] = s.asked
	}
}

func (s *space) live() bool {
	for i := range s.watched {
		w := s.watched[i].Load()
		if !w.inf.HasSynced() || w.open.Load() <= 0 {
			return false
		}
	}
	return true
}

// start makes and runs a namespace's informers; called with c.mu held.
func (c *Cache) start(s *space) {
	for i := range resources {
		c.run(s, i)
	}
}

// run makes and runs the space's informer of resources[i], in place of the one it had.
func (c *Cache) run(s *space, i int) {
	{
		gvr := resources[i]
		w := &watched{stop: make(chan struct{})}
		s.mu.Lock()
		w.since = s.asked
		s.mu.Unlock()
		res := s.client.Resource(gvr).Namespace(s.key.namespace)
		what := gvr.Resource
		// a request of an informer a restart replaced fails nothing
		fail := func(verb string, err error) {
			if s.watched[i].Load() == w {
				c.fail(s, verb, what, err)
			}
		}
		selector := ""
		if gvr == AnalysisRuns {
			selector = unjudged
		}
		lw := &cache.ListWatch{
			ListFunc: func(o metav1.ListOptions) (runtime.Object, error) {
				o.LabelSelector = selector
				l, err := res.List(context.Background(), o)
				if err != nil {
					fail("list", err)
				}
				return l, err
			},
			WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = selector
				wi, err := res.Watch(context.Background(), o)
				if err != nil {
					fail("watch", err)
					return nil, err
				}
				return c.track(w, wi, fail), nil
			},
		}
		w.inf = cache.NewSharedIndexInformerWithOptions(lw, &unstructured.Unstructured{},
			cache.SharedIndexInformerOptions{ObjectDescription: gvr.String()})
		kind := kinds[i]
		transform := func(obj any) (any, error) { return project(kind, obj), nil }
		if gvr == Rollouts {
			transform = s.rolloutTransform
		}
		_ = w.inf.SetTransform(transform)
		// what the wrapped functions above did not see (a watch that ended in a decoding error)
		_ = w.inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { fail("watch", err) })
		if old := s.watched[i].Swap(w); old != nil {
			close(old.stop)
		}
		stop := make(chan struct{})
		go func() {
			select {
			case <-s.stop:
			case <-w.stop:
			}
			close(stop)
		}()
		go w.inf.Run(stop)
	}
}

// track counts an open watch until its result channel ends or carries an Error event.
func (c *Cache) track(w *watched, in watch.Interface, fail func(verb string, err error)) watch.Interface {
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
				fail("watch", fmt.Errorf("%v", statusText(ev.Object)))
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

// Rollout is the named Rollout, if the view holds it: not while the informer keeps only the identity of
// a Rollout asked for after it started (it then lists again, once, and holds it from then on).
func (v View) Rollout(name string) (map[string]any, bool) {
	if o, ok := v.get(0, name); ok {
		return o, true
	}
	s := v.s
	s.mu.Lock()
	asked, ok := s.wanted[name]
	s.mu.Unlock()
	if !ok {
		return nil, false // a name View was not given
	}
	// Cache.mu: not while fail or Close stop the space (a restart would run after them)
	c := v.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.failed && asked > s.watched[0].Load().since {
		c.run(s, 0)
	}
	return nil, false
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
	obj, ok, err := v.s.watched[i].Load().inf.GetStore().GetByKey(v.s.key.namespace + "/" + name)
	if err != nil || !ok {
		return nil, false
	}
	st, ok := obj.(*Stored)
	if !ok {
		return nil, false
	}
	return st.Object()
}

// AnalysisRuns are the runs whose labels match sel.
func (v View) AnalysisRuns(sel labels.Selector) []map[string]any { return v.list(1, sel) }

// Experiments are the experiments whose labels match sel.
func (v View) Experiments(sel labels.Selector) []map[string]any { return v.list(2, sel) }

func (v View) list(i int, sel labels.Selector) []map[string]any {
	out := []map[string]any{}
	for _, obj := range v.s.watched[i].Load().inf.GetStore().List() {
		st, ok := obj.(*Stored)
		if !ok || !sel.Matches(labels.Set(st.meta.Labels)) {
			continue
		}
		if o, ok := st.Object(); ok {
			out = append(out, o)
		}
	}
	return out
}

// Stored is what the informers keep of an object: its key and labels (the store's key, the selectors),
// and what a judgement reads of it (verdict.Project) as JSON, decoded at each read. Maps of the same
// fields take several times the bytes of their JSON (BenchmarkRetainedPerRollout), and the decoded
// object is garbage as soon as the informer has stored this.
type Stored struct {
	meta metav1.ObjectMeta
	raw  []byte
}

// GetObjectMeta makes a Stored an object to the informer's store (meta.Accessor).
func (s *Stored) GetObjectMeta() metav1.Object { return &s.meta }

// Object decodes the projection, as the dynamic client decodes the API server's JSON (integers int64).
func (s *Stored) Object() (map[string]any, bool) {
	var o map[string]any
	if err := utiljson.Unmarshal(s.raw, &o); err != nil || o == nil {
		return nil, false
	}
	return o, true
}

// Transform is what the informers store of an object (Stored); any other value is kept as it is.
func Transform(obj any) (any, error) { return project("", obj), nil }

// project is Transform of an object of kind (its own kind field if "").
func project(kind string, obj any) any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj
	}
	raw, err := json.Marshal(verdict.Project(kind, u.Object))
	if err != nil {
		// not an object the API server sent (they are JSON): nothing to judge it by
		raw = nil
	}
	var lbl map[string]string
	if l := u.GetLabels(); len(l) > 0 {
		lbl = l
	}
	return &Stored{meta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), Labels: lbl}, raw: raw}
}

// rolloutTransform is Transform of a Rollout asked for, and of any other only its key: in a namespace of
// many Rollouts, the one a verification names is kept.
func (s *space) rolloutTransform(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	s.mu.Lock()
	_, wanted := s.wanted[u.GetName()]
	s.mu.Unlock()
	if wanted {
		return project("Rollout", u), nil
	}
	return &Stored{meta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace()}}, nil
}
