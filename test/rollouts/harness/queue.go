package harness

import (
	"errors"
	"sync"
	"time"
)

// stepQueue implements workqueue.RateLimitingInterface for the controller's worker (Controller.Run ->
// controllerutil.RunWorker), but hands out a key only when the recorder asks for a reconcile, and tells
// the recorder when the worker is done with it. Requeue requests from the controller (Add, AddAfter,
// AddRateLimited) are not acted on: the recorder reconciles on every tick anyway, so a pause that the
// controller wants to re-check after its duration is re-checked on a later tick of the fake clock.
// (A failed sync is not visible here, because the controller also enqueues with AddRateLimited after a
// successful one; the recorder reads failures from the controller's error log instead.)
type stepQueue struct {
	items chan any
	done  chan any

	mu       sync.Mutex
	shutdown bool
}

func newStepQueue() *stepQueue {
	return &stepQueue{items: make(chan any), done: make(chan any)}
}

// reconcile hands key to the worker and waits until the worker called Done for it.
func (q *stepQueue) reconcile(key string) error {
	q.items <- key
	select {
	case <-q.done:
		return nil
	case <-time.After(2 * time.Minute):
		return errors.New("reconcile did not finish within 2 minutes")
	}
}

func (q *stepQueue) Add(any)                     {}
func (q *stepQueue) AddAfter(any, time.Duration) {}
func (q *stepQueue) AddRateLimited(any)          {}
func (q *stepQueue) Forget(any)                  {}
func (q *stepQueue) NumRequeues(any) int         { return 0 }
func (q *stepQueue) Len() int                    { return 0 }
func (q *stepQueue) ShutDownWithDrain()          { q.ShutDown() }
func (q *stepQueue) ShuttingDown() bool          { q.mu.Lock(); defer q.mu.Unlock(); return q.shutdown }
func (q *stepQueue) Done(item any)               { q.done <- item }
func (q *stepQueue) Get() (any, bool) {
	item, ok := <-q.items
	return item, !ok
}

func (q *stepQueue) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.shutdown {
		q.shutdown = true
		close(q.items)
	}
}
