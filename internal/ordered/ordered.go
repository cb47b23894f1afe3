// Package ordered runs a function over a stream of inputs on every core and hands the results on in input
// order, with a bounded number of inputs in flight, so that a pipeline's memory does not grow with its
// input.
package ordered

import (
	"runtime"
	"sync"
)

// Map calls next until it reports no more input, runs f on each input on up to workers goroutines
// (GOMAXPROCS when workers <= 0) and calls emit with each result in input order, on the calling goroutine.
//
// Errors are ordered too: an error from next, f or emit ends Map after every earlier input has been
// emitted, so the error returned is the first one in input order, whatever order the workers finish in.
// At most 4×workers inputs are in flight; next is not called again until the oldest one is emitted.
func Map[T, R any](workers int, next func() (T, bool, error), f func(T) (R, error), emit func(R) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	window := 4 * workers

	type slot struct {
		done chan struct{}
		r    R
		err  error
	}
	jobs := make(chan struct {
		in T
		s  *slot
	})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				j.s.r, j.s.err = f(j.in)
				close(j.s.done)
			}
		}()
	}
	defer wg.Wait()
	// Closing jobs on the way out also stops the workers after an early error; inputs already queued are
	// finished and dropped.
	stop := sync.OnceFunc(func() { close(jobs) })
	defer stop()

	pending := make([]*slot, 0, window)
	drainOne := func() error {
		s := pending[0]
		pending = pending[1:]
		<-s.done
		if s.err != nil {
			return s.err
		}
		return emit(s.r)
	}
	for {
		if len(pending) == window {
			if err := drainOne(); err != nil {
				return err
			}
			continue
		}
		in, ok, err := next()
		if err != nil {
			// Earlier inputs come first.
			for len(pending) > 0 {
				if e := drainOne(); e != nil {
					return e
				}
			}
			return err
		}
		if !ok {
			break
		}
		s := &slot{done: make(chan struct{})}
		pending = append(pending, s)
		jobs <- struct {
			in T
			s  *slot
		}{in, s}
	}
	stop()
	for len(pending) > 0 {
		if err := drainOne(); err != nil {
			return err
		}
	}
	return nil
}
