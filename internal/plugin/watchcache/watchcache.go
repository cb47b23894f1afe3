// Package watchcache keeps informers (list + watch) of the Rollouts, AnalysisRuns and Experiments the
// plugin judges, so that a measurement can be answered without an API request. It only says whether its
// view is live; what may be answered from it is the plugin's rule (rolloutplugin judge).
//
// A cluster is watched with three watches across all its namespaces when its identity may (the Rollouts
// controller's own, bound to the chart's ClusterRole), and otherwise in each namespace a verification
// names, three watches each: goroutines and connection buffers, not the objects, are what a watch costs
// (docs/reliability.md "Load"), so a fleet of a thousand namespaces costs three watches, not three
// thousand. What the informers keep of each object is its projection (Stored), made page by page as the
// list is read, so neither the objects nor a whole cluster's list stay in memory.
//
// A view is live when all three informers have synced and each has a watch open that has delivered no
// error. The reflector retries a refused connection without telling anyone (client-go v0.29.3
// tools/cache/reflector.go watch, isWatchErrorRetriable), so the informers run on list and watch
// functions of this package that see every request's outcome and every event; a list or watch that
// fails, or a watch event of type Error (410 Gone among them), stops the namespace's informers with one
// logged reason, and the namespace is read directly until Options.Retry has passed.
package watchcache

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
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

// pageSize is how many objects a page of an informer's list holds: each page is projected before the
// next is read, so a list's peak is one page of whole objects, not the cluster's. The three informers
// list at once, as the first measurements are read directly: at 250 a page, that was the plugin's peak
// RSS, 12 MB above its steady state at 2,000 Rollouts.
const pageSize = 100

// Options configure a Cache.
type Options struct {
	// Idle: a namespace's informers stop when no measurement has asked for it for this long; and an
	// identity refused the watches of every namespace is asked again after this long.
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
	// scoped are the clusters whose identity was refused a list or watch of every namespace, with when
	// to ask again; told, those whose refusal was logged (once a cluster).
	scoped map[string]time.Time
	told   map[string]bool
}

// key is a space: a cluster's namespace, or all its namespaces (namespace "").
type key struct{ cluster, namespace string }

// Cluster is what a view is asked of.
type Cluster struct {
	// ID is the cluster with its credentials: another ID is another space.
	ID string
	// Where names the cluster in logged lines.
	Where string
	// Client is called only to start informers; its client must not time out a request (a watch lasts
	// minutes).
	Client func() (dynamic.Interface, error)
	// AllNamespaces: watch every namespace at once when the identity may; refused (403), each namespace
	// asked for. Unset, each namespace asked for.
	AllNamespaces bool
}

// New returns an empty cache; informers start on the first View of a cluster or namespace.
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
	return &Cache{opts: opts, spaces: map[key]*space{}, closed: make(chan struct{}),
		scoped: map[string]time.Time{}, told: map[string]bool{}}
}

// space is a cluster's namespace, or all its namespaces: its informers, or the time until which it is
// read directly.
type space struct {
	key  key
	stop chan struct{}
	// ctx ends with stop: the informers' requests, a list page or a watch held by the server, end with it.
	ctx      context.Context
	cancel   context.CancelFunc
	stopOnce sync.Once
	// stopped is set, under Cache.mu, once the space is shut down (swept, failed or closed): a failure
	// reported after it, by a request that was in flight, changes nothing.
	stopped  bool
	watched  [len(resources)]*watched
	lastUsed atomic.Int64 // unix nanoseconds
	// failed is set once, under Cache.mu, when a request of an informer failed; retryAt is then when
	// the namespace may be watched again.
	failed  bool
	retryAt time.Time
	// cluster is the space's (its Where names it in messages; every namespace's space starts a
	// namespace's with it); asked, of every namespace's space, the namespaces asked for before it was
	// live, which start at once if it is refused (under Cache.mu)
	cluster Cluster
	asked   map[string]bool
}

type watched struct {
	inf cache.SharedIndexInformer
	// open counts the watches that started and have neither ended nor delivered an error: the store is
	// current only while one is open (between two watches the reflector may be relisting or backing off).
	open atomic.Int32
}

// View is a live namespace's objects. They are shared with the informers: read them, never change them.
type View struct {
	s         *space
	namespace string
}

// View returns the namespace's view if it is live. Otherwise it starts the informers that will serve it
// (unless a failure's Retry has not passed) and reports false: the caller reads directly.
func (c *Cache) View(cl Cluster, namespace string) (View, bool) {
	c.janitor.Do(func() { go c.sweep() })
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	until, scoped := c.scoped[cl.ID]
	if cl.AllNamespaces && (!scoped || !now.Before(until)) {
		s := c.space(cl, metav1.NamespaceAll, now)
		if s != nil && !s.failed && s.live() {
			return View{s, namespace}, true
		}
		if !scoped {
			if s != nil && !s.failed {
				s.asked[namespace] = true
			}
			return View{}, false // the answer to every namespace is on its way
		}
	}
	// per namespace; also while every namespace is asked for again after a refusal
	if s := c.space(cl, namespace, now); s != nil && !s.failed && s.live() {
		return View{s, namespace}, true
	}
	return View{}, false
}

// space returns the space of the cluster's namespace (all of them: ""), marked used, starting its
// informers if it has none or its Retry has passed; nil if no client could be made. Called with c.mu held.
func (c *Cache) space(cl Cluster, namespace string, now time.Time) *space {
	k := key{cl.ID, namespace}
	s := c.spaces[k]
	if s == nil || (s.failed && !now.Before(s.retryAt)) {
		client, err := cl.Client()
		if err != nil {
			return nil
		}
		s = &space{key: k, stop: make(chan struct{}), cluster: cl, asked: map[string]bool{}}
		s.ctx, s.cancel = context.WithCancel(context.Background())
		for i := range resources {
			s.watched[i] = c.run(s, client, i)
		}
		c.spaces[k] = s
	}
	s.lastUsed.Store(now.UnixNano())
	return s
}

// shutdown stops the space's informers and ends their requests; it may be called any number of times,
// from the sweep, a failure and Close, in any order (a watch that failed after the sweep closed its space
// closed stop a second time: a panic on the reflector's goroutine, the plugin's process gone). Called
// with Cache.mu held.
func (s *space) shutdown() {
	s.stopped = true
	s.stopOnce.Do(func() {
		close(s.stop)
		s.cancel()
	})
}

func (s *space) live() bool {
	for _, w := range s.watched {
		if !w.inf.HasSynced() || w.open.Load() <= 0 {
			return false
		}
	}
	return true
}

// run makes and runs the space's informer of resources[i].
func (c *Cache) run(s *space, client dynamic.Interface, i int) *watched {
	gvr := resources[i]
	w := &watched{}
	res := client.Resource(gvr).Namespace(s.key.namespace)
	what := gvr.Resource
	fail := func(verb string, err error) { c.fail(s, verb, what, err) }
	selector := ""
	if gvr == AnalysisRuns {
		selector = unjudged
	}
	kind := kinds[i]
	lw := &cache.ListWatch{
		ListFunc: func(o metav1.ListOptions) (runtime.Object, error) {
			l, err := listProjected(s.ctx, res, kind, selector)
			if err != nil {
				fail("list", err)
			}
			return l, err
		},
		WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			wi, err := res.Watch(s.ctx, o)
			if err != nil {
				fail("watch", err)
				return nil, err
			}
			return c.track(w, wi, fail), nil
		},
	}
	w.inf = cache.NewSharedIndexInformerWithOptions(lw, &unstructured.Unstructured{},
		cache.SharedIndexInformerOptions{ObjectDescription: gvr.String(),
			Indexers: cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}})
	_ = w.inf.SetTransform(func(obj any) (any, error) { return project(kind, obj), nil })
	// what the wrapped functions above did not see (a watch that ended in a decoding error)
	_ = w.inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { fail("watch", err) })
	go w.inf.Run(s.stop)
	return w
}

// listResource is what listProjected asks of a dynamic.ResourceInterface.
type listResource interface {
	List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
}

// listProjected lists in pages and keeps each object's projection as its page is read. It reads the
// current state whatever resourceVersion the reflector asked for (the API server's watch cache answers
// "0" with one page of everything, ignoring the limit): never older than what it asked for.
func listProjected(ctx context.Context, res listResource, kind, selector string) (*storedList, error) {
	out := &storedList{}
	o := metav1.ListOptions{LabelSelector: selector, Limit: pageSize}
	for pages := 1; ; pages++ {
		if pages > MaxListPages || len(out.Items) > MaxListObjects {
			return nil, ErrListTooLong
		}
		page, cancel := context.WithTimeout(ctx, PageTimeout)
		l, err := res.List(page, o)
		cancel()
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out.Items = append(out.Items, project(kind, &l.Items[i]).(*Stored))
		}
		out.ResourceVersion = l.GetResourceVersion()
		if o.Continue = l.GetContinue(); o.Continue == "" {
			return out, nil
		}
	}
}

// A list is bounded: a server that answers every page with a continue token (a hostile one a kubeconfig
// Secret names) would otherwise be listed from for ever, the items of every page kept. 500 pages of
// pageSize are 50,000 objects, five times the largest fleet measured (docs/reliability.md: 10,000
// Rollouts); at the client's rate limit (100 requests a second, shared by a space's three informers) a
// list without end is refused within about 15 s. A page that takes PageTimeout is a server that does not
// answer (the watches' client has no timeout).
const (
	MaxListPages   = 500
	MaxListObjects = MaxListPages * pageSize
	PageTimeout    = time.Minute
)

// ErrListTooLong is the error of a list over MaxListPages pages or MaxListObjects objects.
var ErrListTooLong = fmt.Errorf("the list did not end within %d pages or %d objects: refused", MaxListPages, MaxListObjects)

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

// fail stops a space's informers after a failed request, once, with one logged line. A refused list or
// watch of every namespace makes the cluster watched per namespace until Idle has passed, logged once.
func (c *Cache) fail(s *space, verb, what string, err error) {
	c.mu.Lock()
	if s.failed || s.stopped {
		// already failed, or swept or closed while the request was in flight: nothing to stop or say
		c.mu.Unlock()
		return
	}
	s.failed = true
	s.retryAt = time.Now().Add(c.opts.Retry)
	s.shutdown()
	cluster := s.key.cluster
	if s.key.namespace == metav1.NamespaceAll && apierrors.IsForbidden(err) {
		now := time.Now()
		c.scoped[cluster] = now.Add(c.opts.Idle)
		delete(c.spaces, s.key)
		// the namespaces measured meanwhile are watched from now, not from their next measurement
		for ns := range s.asked {
			c.space(s.cluster, ns, now)
		}
		told := c.told[cluster]
		c.told[cluster] = true
		c.mu.Unlock()
		if !told {
			c.opts.Logf("%s %s in every namespace of %s refused: %s; watching each namespace a verification names",
				verb, what, s.cluster.Where, describe(verb, what, err))
		}
		return
	}
	c.mu.Unlock()
	in := "namespace " + s.key.namespace
	if s.key.namespace == metav1.NamespaceAll {
		in = "every namespace"
	}
	c.opts.Logf("%s %s in %s of %s failed: %s; reading directly, watching again in %s",
		verb, what, in, s.cluster.Where, describe(verb, what, err), c.opts.Retry)
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

// sweep stops the informers of spaces no measurement asked for in Idle.
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
				s.shutdown()
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
		s.failed = true
		s.shutdown()
		delete(c.spaces, k)
	}
}

// Spaces are the namespaces with informers running, "" for every namespace of a cluster (tests).
func (c *Cache) Spaces() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, s := range c.spaces {
		if !s.failed {
			out = append(out, k.namespace)
		}
	}
	sort.Strings(out)
	return out
}

// Rollout is the named Rollout of the view's namespace, if the view holds it.
func (v View) Rollout(name string) (map[string]any, bool) { return v.get(0, name) }

// AnalysisRun is the named run, if the view holds it (never a verification run: VerificationRuns).
func (v View) AnalysisRun(name string) (map[string]any, bool) { return v.get(1, name) }

// Experiment is the named experiment, if the view holds it.
func (v View) Experiment(name string) (map[string]any, bool) { return v.get(2, name) }

func (v View) get(i int, name string) (map[string]any, bool) {
	obj, ok, err := v.s.watched[i].inf.GetStore().GetByKey(v.namespace + "/" + name)
	if err != nil || !ok {
		return nil, false
	}
	st, ok := obj.(*Stored)
	if !ok {
		return nil, false
	}
	return st.Object()
}

// AnalysisRuns are the runs of the view's namespace whose labels match sel.
func (v View) AnalysisRuns(sel labels.Selector) []map[string]any { return v.list(1, sel) }

// Experiments are the experiments of the view's namespace whose labels match sel.
func (v View) Experiments(sel labels.Selector) []map[string]any { return v.list(2, sel) }

func (v View) list(i int, sel labels.Selector) []map[string]any {
	out := []map[string]any{}
	objs, _ := v.s.watched[i].inf.GetIndexer().ByIndex(cache.NamespaceIndex, v.namespace)
	for _, obj := range objs {
		st, ok := obj.(*Stored)
		if !ok || !sel.Matches(st.labels) {
			continue
		}
		if o, ok := st.Object(); ok {
			out = append(out, o)
		}
	}
	return out
}

// Stored is what the informers keep of an object: its key, its labels where a selector reads them (the
// runs and the experiments), and what a judgement reads of it (verdict.Project) as deflated JSON, decoded
// at each read. Maps of the same fields take several times the bytes of their JSON, an ObjectMeta several
// times the bytes of a name (BenchmarkRetainedPerRollout), and the decoded object is garbage as soon as
// the informer has stored this.
type Stored struct {
	name, namespace string
	labels          labelSet
	z               []byte // the projection's JSON, deflated (deflated); nil: not JSON
}

// GetObjectMeta makes a Stored an object to the informer's store (meta.Accessor): its key and namespace
// index read the name and the namespace alone.
func (s *Stored) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: s.name, Namespace: s.namespace}
}

// GetObjectKind and DeepCopyObject make a Stored an item of a list (storedList) to the reflector.
func (s *Stored) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject shares everything: nothing of a Stored is written after it is made.
func (s *Stored) DeepCopyObject() runtime.Object {
	c := *s
	return &c
}

// labelSet is an object's labels as key, value pairs sorted by key: what a selector asks (labels.Labels),
// in a fraction of a map's bytes.
type labelSet []string

func newLabelSet(m map[string]string) labelSet {
	if len(m) == 0 {
		return nil
	}
	l := make(labelSet, 0, 2*len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		l = append(l, k, m[k])
	}
	return l
}

func (l labelSet) find(k string) (string, bool) {
	i := sort.Search(len(l)/2, func(i int) bool { return l[2*i] >= k })
	if i < len(l)/2 && l[2*i] == k {
		return l[2*i+1], true
	}
	return "", false
}

// Has and Get make a labelSet labels.Labels.
func (l labelSet) Has(k string) bool { _, ok := l.find(k); return ok }

func (l labelSet) Get(k string) string { v, _ := l.find(k); return v }

// storedList is a list as listProjected returns it to the reflector: the list's resourceVersion, which
// the watch starts from, and the items already projected.
type storedList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []*Stored
}

func (l *storedList) DeepCopyObject() runtime.Object {
	c := &storedList{TypeMeta: l.TypeMeta, Items: make([]*Stored, len(l.Items))}
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	for i, s := range l.Items {
		c.Items[i] = s.DeepCopyObject().(*Stored)
	}
	return c
}

// Object decodes the projection, as the dynamic client decodes the API server's JSON (integers int64).
func (s *Stored) Object() (map[string]any, bool) {
	raw, err := inflate(s.z)
	if err != nil {
		return nil, false
	}
	var o map[string]any
	if err := utiljson.Unmarshal(raw, &o); err != nil || o == nil {
		return nil, false
	}
	return o, true
}

// dictionary is the words every projection spells, verdict.Names as JSON keys: a projection is about a
// kilobyte, too short for deflate to find its own repeats, so its keys are matched against these
// (BenchmarkRetainedPerRollout measures what a Rollout with its run keeps). deflateLevel is the fastest
// level that uses a dictionary (compress/flate BestSpeed ignores it).
var dictionary = func() []byte {
	var b bytes.Buffer
	for _, n := range verdict.Names() {
		b.WriteString(strconv.Quote(n) + ":")
	}
	return b.Bytes()
}()

const deflateLevel = 3

// The flate writers are pooled: each holds most of a megabyte of tables, and the informers deflate
// every object they store.
var (
	deflaters = sync.Pool{New: func() any {
		w, err := flate.NewWriterDict(io.Discard, deflateLevel, dictionary)
		if err != nil {
			panic(err) // deflateLevel is a valid level
		}
		return w
	}}
	inflaters sync.Pool
)

// deflated is v as JSON, deflated with the dictionary; nil if v is not JSON.
func deflated(v any) []byte {
	var b bytes.Buffer
	w := deflaters.Get().(*flate.Writer)
	defer deflaters.Put(w)
	w.Reset(&b)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		return nil
	}
	if err := w.Close(); err != nil {
		return nil
	}
	return bytes.Clone(b.Bytes())
}

func inflate(z []byte) ([]byte, error) {
	r, _ := inflaters.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReaderDict(bytes.NewReader(z), dictionary)
	} else if err := r.(flate.Resetter).Reset(bytes.NewReader(z), dictionary); err != nil {
		return nil, err
	}
	defer inflaters.Put(r)
	return io.ReadAll(r)
}

// Transform is what the informers store of an object (Stored); any other value is kept as it is.
func Transform(obj any) (any, error) { return project("", obj), nil }

// project is Transform of an object of kind (its own kind field if "").
func project(kind string, obj any) any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj
	}
	if kind == "" {
		kind = u.GetKind()
	}
	// z nil if not an object the API server sent (they are JSON): nothing to judge it by
	st := &Stored{name: u.GetName(), namespace: u.GetNamespace(), z: deflated(verdict.Project(kind, u.Object))}
	if kind != "Rollout" {
		// a Rollout is read by its name, never selected
		st.labels = newLabelSet(u.GetLabels())
	}
	return st
}
