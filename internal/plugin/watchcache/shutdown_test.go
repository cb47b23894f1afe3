package watchcache

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
)

// TestLateFailure: a request of a space's informers that fails after the space was shut down (swept as
// idle, or the cache closed) changes nothing: no panic (before, the sweep's close(stop) and the failure's
// were two: "close of closed channel" on the reflector's goroutine killed the plugin's process, issue 57),
// no line logged, and the space that replaced it in the meantime stays.
func TestLateFailure(t *testing.T) {
	refused := apierrors.NewForbidden(schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}, "", errors.New("cannot watch"))
	for _, tc := range []struct {
		name  string
		verb  string // the request held, then failed
		all   bool
		err   error
		close bool // the cache is closed instead of swept
	}{
		{name: "watch held past the sweep, then 500", verb: "watch", err: apierrors.NewInternalError(errors.New("boom"))},
		{name: "list held past the sweep, then 500", verb: "list", err: apierrors.NewInternalError(errors.New("boom"))},
		{name: "every namespace's watch held past the sweep, then refused", verb: "watch", all: true, err: refused},
		{name: "watch held past Close, then 500", verb: "watch", err: apierrors.NewInternalError(errors.New("boom")), close: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, cl := fakeCluster(tc.all, object("Rollout", "shop", "checkout", nil))
			held, release := make(chan struct{}), make(chan struct{})
			var first atomic.Bool
			hold := func() bool {
				if !first.CompareAndSwap(false, true) {
					return false // later requests, of the space that replaces it, are answered
				}
				close(held)
				<-release
				return true
			}
			if tc.verb == "watch" {
				c.PrependWatchReactor("rollouts", func(k8stesting.Action) (bool, watch.Interface, error) {
					if hold() {
						return true, nil, tc.err
					}
					return false, nil, nil
				})
			} else {
				c.PrependReactor("list", "rollouts", func(k8stesting.Action) (bool, runtime.Object, error) {
					if hold() {
						return true, nil, tc.err
					}
					return false, nil, nil
				})
			}
			var mu sync.Mutex
			var logged []string
			wc := New(Options{Idle: 300 * time.Millisecond, Retry: time.Hour, Logf: func(f string, a ...any) {
				mu.Lock()
				defer mu.Unlock()
				logged = append(logged, f)
			}})
			defer wc.Close()
			wc.View(cl, "shop")
			select {
			case <-held:
			case <-time.After(10 * time.Second):
				t.Fatal("the informer's request was not made within 10s")
			}
			if tc.close {
				wc.Close()
			} else {
				deadline := time.Now().Add(10 * time.Second)
				for len(wc.Spaces()) > 0 {
					if time.Now().After(deadline) {
						t.Fatalf("not swept within 10s: %q", wc.Spaces())
					}
					time.Sleep(20 * time.Millisecond)
				}
				// a measurement asks again: a new space of the same key
				wc.View(cl, "shop")
			}
			want := wc.Spaces()
			close(release)
			time.Sleep(300 * time.Millisecond) // the failure reaches fail (and, before the fix, the panic)
			if got := wc.Spaces(); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("spaces %q after the late failure, want %q", got, want)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(logged) > 0 {
				t.Errorf("a failure of a shut-down space was logged: %q", logged)
			}
		})
	}
}

// TestListPagesBounded: a server that answers every page with a continue token is listed from
// MaxListPages times, then refused; a page that does not come back ends with the space.
func TestListPagesBounded(t *testing.T) {
	c, _ := fakeCluster(false)
	var pages atomic.Int64
	c.PrependReactor("list", "rollouts", func(k8stesting.Action) (bool, runtime.Object, error) {
		n := pages.Add(1)
		l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "RolloutList"}}
		l.SetResourceVersion("1")
		l.SetContinue("page-" + string(rune('a'+n%26)))
		return true, l, nil
	})
	_, err := listProjected(context.Background(), c.Resource(Rollouts).Namespace("shop"), "Rollout", "")
	if !errors.Is(err, ErrListTooLong) {
		t.Fatalf("err %v, want ErrListTooLong", err)
	}
	if n := pages.Load(); n != MaxListPages {
		t.Errorf("%d pages read, want %d", n, MaxListPages)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := listProjected(ctx, fakeListsCanceled{}.res(), "Rollout", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("a list of a stopped space: %v, want context.Canceled", err)
	}
}

// fakeListsCanceled is a resource whose list returns its context's error, as client-go's does.
type fakeListsCanceled struct{}

func (fakeListsCanceled) res() listResource { return fakeListsCanceled{} }

func (fakeListsCanceled) List(ctx context.Context, _ metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
