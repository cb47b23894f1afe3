package ordered

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// Results come in input order although later inputs finish first, and no more than the window is in
// flight at once.
func TestMapKeepsOrderAndBoundsInFlight(t *testing.T) {
	const n = 200
	var inFlight, most atomic.Int64
	i := 0
	next := func() (int, bool, error) {
		if i == n {
			return 0, false, nil
		}
		i++
		return i - 1, true, nil
	}
	var got []int
	err := Map(3, next, func(x int) (int, error) {
		cur := inFlight.Add(1)
		for {
			m := most.Load()
			if cur <= m || most.CompareAndSwap(m, cur) {
				break
			}
		}
		time.Sleep(time.Duration(n-x) * time.Microsecond) // later inputs finish sooner
		inFlight.Add(-1)
		return x * 2, nil
	}, func(r int) error {
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range got {
		if r != 2*k {
			t.Fatalf("result %d is %d: out of order", k, r)
		}
	}
	if len(got) != n {
		t.Fatalf("%d results, want %d", len(got), n)
	}
	if most.Load() > 3 {
		t.Errorf("%d inputs ran at once on 3 workers", most.Load())
	}
}

// The error returned is the first in input order, after every earlier result, whichever fails first in
// time; an error from next comes after the inputs before it.
func TestMapFirstErrorInInputOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		failAt  map[int]bool
		nextErr int
		want    string
		emitted int
	}{
		{"f fails", map[int]bool{7: true, 3: true}, -1, "input 3", 3},
		{"next fails", map[int]bool{}, 5, "next at 5", 5},
		{"f fails before next", map[int]bool{2: true}, 5, "input 2", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := 0
			next := func() (int, bool, error) {
				if i == tc.nextErr {
					return 0, false, fmt.Errorf("next at %d", i)
				}
				if i == 20 {
					return 0, false, nil
				}
				i++
				return i - 1, true, nil
			}
			emitted := 0
			err := Map(4, next, func(x int) (int, error) {
				if tc.failAt[x] {
					if x == 3 {
						time.Sleep(5 * time.Millisecond) // fails after input 7 has
					}
					return 0, fmt.Errorf("input %d", x)
				}
				return x, nil
			}, func(int) error {
				emitted++
				return nil
			})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %s", err, tc.want)
			}
			if emitted != tc.emitted {
				t.Errorf("%d results emitted before the error, want %d", emitted, tc.emitted)
			}
		})
	}
	stop := errors.New("stop")
	if err := Map(2, func() (int, bool, error) { return 1, true, nil }, func(x int) (int, error) { return x, nil }, func(int) error { return stop }); err != stop {
		t.Errorf("emit's error: %v", err)
	}
}
