package engine

import (
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// openSandbox opens what Argo CD opens on every state, whatever UseOpenLibs says (util/lua/lua.go runLua):
// package, base, table, and its "safe os" opener. That opener registers time and date under the *table*
// library's name, so the global os stays nil and table.time/table.date exist; scripts reach the safe os
// through require("os"), which Argo CD preloads (util/lua/oslib_safe.go). Reproduced as observed.
func openSandbox(L *lua.LState) {
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.OsLibName, openSafeOs},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	cachedLoadString(L)
	L.PreloadModule(lua.OsLibName, func(L *lua.LState) int {
		L.Push(L.SetFuncs(L.NewTable(), safeOs))
		return 1
	})
}

func openSafeOs(L *lua.LState) int {
	L.Push(L.RegisterModule(lua.TabLibName, safeOs))
	return 1
}

var safeOs = map[string]lua.LGFunction{"time": osTime, "date": osDate}

func osTime(L *lua.LState) int {
	if L.GetTop() == 0 {
		L.Push(lua.LNumber(time.Now().Unix()))
		return 1
	}
	t := L.CheckTable(1)
	field := func(k string, def int) int {
		if n, ok := t.RawGetString(k).(lua.LNumber); ok {
			return int(n)
		}
		return def
	}
	d := time.Date(field("year", -1), time.Month(field("month", -1)), field("day", -1),
		field("hour", 12), field("min", 0), field("sec", 0), 0, time.Local)
	L.Push(lua.LNumber(d.Unix()))
	return 1
}

func osDate(L *lua.LState) int {
	t := time.Now()
	format := "%c"
	if L.GetTop() >= 1 {
		format = L.CheckString(1)
		if strings.HasPrefix(format, "!") {
			t = t.UTC()
			format = strings.TrimLeft(format, "!")
		}
		if L.GetTop() >= 2 {
			t = time.Unix(L.CheckInt64(2), 0)
			if strings.HasPrefix(L.CheckString(1), "!") {
				t = t.UTC()
			}
		}
	}
	if strings.HasPrefix(format, "*t") {
		ret := L.NewTable()
		ret.RawSetString("year", lua.LNumber(t.Year()))
		ret.RawSetString("month", lua.LNumber(t.Month()))
		ret.RawSetString("day", lua.LNumber(t.Day()))
		ret.RawSetString("hour", lua.LNumber(t.Hour()))
		ret.RawSetString("min", lua.LNumber(t.Minute()))
		ret.RawSetString("sec", lua.LNumber(t.Second()))
		ret.RawSetString("wday", lua.LNumber(t.Weekday()+1))
		ret.RawSetString("yday", lua.LNumber(t.YearDay()))
		ret.RawSetString("isdst", lua.LFalse)
		L.Push(ret)
		return 1
	}
	L.Push(lua.LString(strftime(t, format)))
	return 1
}

// strftime covers the conversions gopher-lua's os.date knows.
func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch format[i] {
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'c':
			b.WriteString(t.Format("Mon Jan  2 15:04:05 2006"))
		case 'd':
			b.WriteString(t.Format("02"))
		case 'H':
			b.WriteString(t.Format("15"))
		case 'I':
			b.WriteString(t.Format("03"))
		case 'm':
			b.WriteString(t.Format("01"))
		case 'M':
			b.WriteString(t.Format("04"))
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'S':
			b.WriteString(t.Format("05"))
		case 'y':
			b.WriteString(t.Format("06"))
		case 'Y':
			b.WriteString(t.Format("2006"))
		case 'x':
			b.WriteString(t.Format("01/02/06"))
		case 'X':
			b.WriteString(t.Format("15:04:05"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
