package reliability

import "testing"

func TestParseLoadSpec(t *testing.T) {
	for _, c := range []struct {
		in     string
		want   loadSpec
		prefix string
		err    bool
	}{
		{in: "200", want: loadSpec{n: 200, ctrl: defaultController}, prefix: "load200-"},
		{in: "2000@400", want: loadSpec{n: 2000, ctrl: controllerSettings{QPS: 400, Burst: 800, Threads: 30}}, prefix: "load2000-q400-t30-"},
		{in: "10000@2000/100", want: loadSpec{n: 10000, ctrl: controllerSettings{QPS: 2000, Burst: 4000, Threads: 100}}, prefix: "load10000-q2000-t100-"},
		{in: "0", want: loadSpec{n: 0, ctrl: defaultController}, prefix: "load0-"},
		{in: "500:1", want: loadSpec{n: 500, ctrl: defaultController, one: true}, prefix: "load500-one-"},
		{in: "505:1@400", want: loadSpec{n: 505, ctrl: controllerSettings{QPS: 400, Burst: 800, Threads: 30}, one: true}, prefix: "load505-one-q400-t30-"},
		{in: "0:1", err: true},
		{in: "500:2", err: true},
		{in: "205", err: true},
		{in: "x", err: true},
		{in: "200@", err: true},
		{in: "200@0", err: true},
		{in: "200@40/", err: true},
		{in: "200@40/-1", err: true},
	} {
		got, err := parseLoadSpec(c.in)
		if c.err {
			if err == nil {
				t.Errorf("%q: no error, got %+v", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want || got.prefix() != c.prefix {
			t.Errorf("%q: %+v %q %v, want %+v %q", c.in, got, got.prefix(), err, c.want, c.prefix)
		}
	}
}
