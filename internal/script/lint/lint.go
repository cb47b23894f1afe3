// Package lint finds, before anything runs, what breaks an Argo CD Lua script only once it is in the
// cluster: library calls the sandbox does not provide, globals (typos and leaks), health statuses Argo CD
// does not accept, and actions that patch an object of another kind. Every finding carries its line.
//
// The sandbox rules follow Argo CD's util/lua/lua.go (runLua): without useOpenLibs a state has only the
// base, table and package libraries, and require("os") yields an os with time and date alone
// (oslib_safe.go); health scripts from argocd-cm run that way unless useOpenLibs is set for their kind,
// built-in health scripts always with open libraries, and every discovery and action script without them.
package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// Role says which of Argo CD's entry points runs a script.
type Role int

const (
	Health Role = iota
	Discovery
	Action
)

func (r Role) String() string {
	return [...]string{"health", "discovery", "action"}[r]
}

// Script is one script to check.
type Script struct {
	// Path names the script in findings.
	Path   string
	Source string
	Role   Role
	// Kind is the resource kind the script is registered for; an action returning another kind's object
	// needs the create operation.
	Kind string
	// OpenLibs says the script runs with gopher-lua's full standard library (built-in health scripts, and
	// argocd-cm health scripts with useOpenLibs).
	OpenLibs bool
}

// Rules, as they appear in findings.
const (
	RuleStdlib = "stdlib" // a library the sandbox does not open
	RuleMethod = "string-method"
	RuleGlobal = "global" // assignment to a global, or read of one nothing defines
	RuleStatus = "status" // a status string Argo CD does not accept
	RuleKind   = "kind"   // an action returning another kind without create
)

// Finding is one problem at one line.
type Finding struct {
	Path    string
	Line    int
	Rule    string
	Message string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.Path, f.Line, f.Rule, f.Message)
}

// baseGlobals are the globals of a state Argo CD opens without useOpenLibs: gopher-lua's base library,
// table and package (TestBaseGlobalsMatchEngine checks the list against the engine's sandbox).
var baseGlobals = set("_G", "_VERSION", "_GOPHER_LUA_VERSION", "_printregs", "assert", "collectgarbage", "dofile", "error", "getfenv", "getmetatable",
	"ipairs", "load", "loadfile", "loadstring", "module", "newproxy", "next", "pairs", "pcall", "print", "rawequal",
	"rawget", "rawset", "require", "select", "setfenv", "setmetatable", "tonumber", "tostring", "type", "unpack",
	"xpcall", "table", "package")

// openLibGlobals are the libraries useOpenLibs adds.
var openLibGlobals = set("string", "math", "os", "io", "coroutine", "debug", "channel")

// stringMethods are the string library's functions, reachable as methods (s:sub(1, 2)) only when the
// string library is open: its metatable is set by OpenString.
var stringMethods = set("byte", "char", "dump", "find", "format", "gfind", "gmatch", "gsub", "len", "lower",
	"match", "rep", "reverse", "sub", "upper")

var validStatuses = set("Healthy", "Progressing", "Suspended", "Degraded", "Missing", "Unknown")

// Check parses and lints one script. A syntax error is returned as an error, with gopher-lua's message.
func Check(s Script) ([]Finding, error) {
	chunk, err := parse.Parse(strings.NewReader(s.Source), "<string>")
	if err != nil {
		return nil, err
	}
	c := &checker{script: s, assigned: map[string]bool{}, returned: map[string]bool{}}
	c.collectGlobalAssignments(chunk)
	c.push()
	c.block(chunk)
	c.pop()
	for _, st := range c.statuses {
		if st.holder == "" || c.returned[st.holder] {
			c.add(st.line, RuleStatus, fmt.Sprintf("status %q is not one of Argo CD's six (Healthy, Progressing, Suspended, Degraded, Missing, Unknown): Argo CD reports Unknown \"Lua returned an invalid health status\"", st.value))
		}
	}
	if s.Role == Action && !c.creates {
		for _, k := range c.kinds {
			if k.kind != s.Kind && s.Kind != "" {
				c.add(k.line, RuleKind, fmt.Sprintf("returns an object of kind %q from a %s action, without operation \"create\": Argo CD patches the live %s with it", k.kind, s.Kind, s.Kind))
			}
		}
	}
	sort.SliceStable(c.findings, func(i, j int) bool { return c.findings[i].Line < c.findings[j].Line })
	return c.findings, nil
}

type local struct {
	safeOs bool // bound to require("os")
}

type kindLiteral struct {
	kind string
	line int
}

// statusLiteral is a string stored as a status: in a table returned directly (holder ""), or in the
// table a variable holds, which counts only if the script returns that variable.
type statusLiteral struct {
	holder, value string
	line          int
}

type checker struct {
	script   Script
	scopes   []map[string]local
	assigned map[string]bool // globals the script assigns somewhere
	findings []Finding
	seen     map[string]bool
	creates  bool
	kinds    []kindLiteral
	statuses []statusLiteral
	returned map[string]bool // variables some return statement returns
	// holder names the variable the table being walked is assigned to; returning marks a table returned
	// directly.
	holder    string
	returning bool
}

func (c *checker) add(line int, rule, msg string) {
	key := fmt.Sprintf("%d\x00%s\x00%s", line, rule, msg)
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	c.findings = append(c.findings, Finding{Path: c.script.Path, Line: line, Rule: rule, Message: msg})
}

func (c *checker) push()                        { c.scopes = append(c.scopes, map[string]local{}) }
func (c *checker) pop()                         { c.scopes = c.scopes[:len(c.scopes)-1] }
func (c *checker) declare(name string, l local) { c.scopes[len(c.scopes)-1][name] = l }

func (c *checker) lookup(name string) (local, bool) {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if l, ok := c.scopes[i][name]; ok {
			return l, true
		}
	}
	return local{}, false
}

// defined says whether a global exists at run time in this script's sandbox.
func (c *checker) defined(name string) bool {
	switch {
	case baseGlobals[name], name == "obj":
		return true
	case name == "actionParams":
		return c.script.Role == Action
	case openLibGlobals[name]:
		return c.script.OpenLibs
	}
	return false
}

// collectGlobalAssignments finds the global names the script assigns anywhere, so that reading one is
// not reported as undefined as well (the assignment itself is).
func (c *checker) collectGlobalAssignments(stmts []ast.Stmt) {
	// Scoping does not matter for this pre-pass beyond top-level identifiers assigned without local.
	var walk func([]ast.Stmt)
	walk = func(stmts []ast.Stmt) {
		for _, st := range stmts {
			switch s := st.(type) {
			case *ast.AssignStmt:
				for _, l := range s.Lhs {
					if id, ok := l.(*ast.IdentExpr); ok {
						c.assigned[id.Value] = true
					}
				}
			case *ast.FuncDefStmt:
				if id, ok := s.Name.Func.(*ast.IdentExpr); ok {
					c.assigned[id.Value] = true
				}
				walk(s.Func.Stmts)
			case *ast.DoBlockStmt:
				walk(s.Stmts)
			case *ast.WhileStmt:
				walk(s.Stmts)
			case *ast.RepeatStmt:
				walk(s.Stmts)
			case *ast.IfStmt:
				walk(s.Then)
				walk(s.Else)
			case *ast.NumberForStmt:
				walk(s.Stmts)
			case *ast.GenericForStmt:
				walk(s.Stmts)
			}
		}
	}
	walk(stmts)
}

func (c *checker) block(stmts []ast.Stmt) {
	for _, st := range stmts {
		c.stmt(st)
	}
}

func (c *checker) scoped(stmts []ast.Stmt, names ...string) {
	c.push()
	for _, n := range names {
		c.declare(n, local{})
	}
	c.block(stmts)
	c.pop()
}

func (c *checker) stmt(st ast.Stmt) {
	switch s := st.(type) {
	case *ast.AssignStmt:
		for i, e := range s.Rhs {
			if i < len(s.Lhs) {
				if id, ok := s.Lhs[i].(*ast.IdentExpr); ok {
					c.holder = id.Value
				}
			}
			c.expr(e)
			c.holder = ""
		}
		for i, l := range s.Lhs {
			c.target(l, s.Line())
			if i < len(s.Rhs) {
				c.holder = holderName(l)
				c.fieldValue(fieldName(l), s.Rhs[i], s.Line())
				c.holder = ""
			}
		}
	case *ast.LocalAssignStmt:
		// `local function f` is parsed as `local f = function`; f is visible in its own body, so declare
		// first when the only value is a function.
		fn := len(s.Names) == 1 && len(s.Exprs) == 1
		if fn {
			_, fn = s.Exprs[0].(*ast.FunctionExpr)
		}
		if fn {
			c.declare(s.Names[0], local{})
		}
		for i, e := range s.Exprs {
			if i < len(s.Names) {
				c.holder = s.Names[i]
			}
			c.expr(e)
			c.holder = ""
		}
		for i, n := range s.Names {
			l := local{}
			if i < len(s.Exprs) {
				l.safeOs = isRequireOs(s.Exprs[i])
			}
			c.declare(n, l)
		}
	case *ast.FuncCallStmt:
		c.expr(s.Expr)
	case *ast.DoBlockStmt:
		c.scoped(s.Stmts)
	case *ast.WhileStmt:
		c.expr(s.Condition)
		c.scoped(s.Stmts)
	case *ast.RepeatStmt:
		// The condition sees the body's locals.
		c.push()
		c.block(s.Stmts)
		c.expr(s.Condition)
		c.pop()
	case *ast.IfStmt:
		c.expr(s.Condition)
		c.scoped(s.Then)
		c.scoped(s.Else)
	case *ast.NumberForStmt:
		c.expr(s.Init)
		c.expr(s.Limit)
		if s.Step != nil {
			c.expr(s.Step)
		}
		c.scoped(s.Stmts, s.Name)
	case *ast.GenericForStmt:
		for _, e := range s.Exprs {
			c.expr(e)
		}
		c.scoped(s.Stmts, s.Names...)
	case *ast.FuncDefStmt:
		if s.Name.Func != nil {
			c.target(s.Name.Func, s.Line())
		} else {
			c.expr(s.Name.Receiver)
		}
		params := append([]string(nil), s.Func.ParList.Names...)
		if s.Name.Method != "" {
			params = append(params, "self")
		}
		c.scoped(s.Func.Stmts, params...)
	case *ast.ReturnStmt:
		for _, e := range s.Exprs {
			if id, ok := e.(*ast.IdentExpr); ok {
				c.returned[id.Value] = true
			}
			if _, ok := e.(*ast.TableExpr); ok {
				c.returning = true
			}
			c.expr(e)
			c.returning = false
		}
	}
}

// target checks the left side of an assignment.
func (c *checker) target(e ast.Expr, line int) {
	switch t := e.(type) {
	case *ast.IdentExpr:
		if _, ok := c.lookup(t.Value); !ok && t.Value != "obj" {
			c.add(line, RuleGlobal, fmt.Sprintf("assignment to global %s: declare it local", t.Value))
		}
	case *ast.AttrGetExpr:
		c.expr(t.Object)
		c.expr(t.Key)
	default:
		c.expr(e)
	}
}

func (c *checker) expr(e ast.Expr) {
	// Only a table constructor written right where it is held or returned takes the holder.
	holder, returning := c.holder, c.returning
	c.holder, c.returning = "", false
	switch x := e.(type) {
	case nil:
	case *ast.IdentExpr:
		if _, ok := c.lookup(x.Value); ok {
			return
		}
		switch {
		case openLibGlobals[x.Value] && !c.script.OpenLibs:
			// Reported where a member is used (attrGet); a bare use is rare but just as nil.
			c.add(x.Line(), RuleStdlib, fmt.Sprintf("%s is nil: %s", x.Value, c.noLibs()))
		case !c.defined(x.Value) && !c.assigned[x.Value]:
			c.add(x.Line(), RuleGlobal, fmt.Sprintf("read of undefined global %s (nil at run time)", x.Value))
		}
	case *ast.AttrGetExpr:
		if id, ok := x.Object.(*ast.IdentExpr); ok {
			if key, ok := x.Key.(*ast.StringExpr); ok {
				l, isLocal := c.lookup(id.Value)
				switch {
				case isLocal && l.safeOs && key.Value != "time" && key.Value != "date":
					c.add(x.Line(), RuleStdlib, fmt.Sprintf("%s.%s is nil: require(\"os\") gives only os.time and os.date", id.Value, key.Value))
					return
				case !isLocal && openLibGlobals[id.Value] && !c.script.OpenLibs:
					c.add(x.Line(), RuleStdlib, fmt.Sprintf("%s.%s: %s", id.Value, key.Value, c.noLibs()))
					return
				}
			}
		}
		c.expr(x.Object)
		c.expr(x.Key)
	case *ast.FuncCallExpr:
		if x.Func != nil {
			c.expr(x.Func)
		}
		if x.Receiver != nil {
			c.expr(x.Receiver)
			if stringMethods[x.Method] && !c.script.OpenLibs {
				c.add(x.Line(), RuleMethod, fmt.Sprintf(":%s() is a string method, and strings have none: %s", x.Method, c.noLibs()))
			}
		}
		for _, a := range x.Args {
			c.expr(a)
		}
	case *ast.TableExpr:
		for _, f := range x.Fields {
			c.holder, c.returning = "", false
			c.expr(f.Key)
			c.expr(f.Value)
			if k, ok := f.Key.(*ast.StringExpr); ok {
				switch {
				case returning:
					c.holder = ""
				case holder != "":
					c.holder = holder
				default:
					c.holder = "\x00" // a table neither returned nor held: never reported
				}
				c.fieldValue(k.Value, f.Value, x.Line())
			}
		}
		c.holder, c.returning = "", false
	case *ast.FunctionExpr:
		c.scoped(x.Stmts, x.ParList.Names...)
	case *ast.LogicalOpExpr:
		c.expr(x.Lhs)
		c.expr(x.Rhs)
	case *ast.RelationalOpExpr:
		c.expr(x.Lhs)
		c.expr(x.Rhs)
	case *ast.StringConcatOpExpr:
		c.expr(x.Lhs)
		c.expr(x.Rhs)
	case *ast.ArithmeticOpExpr:
		c.expr(x.Lhs)
		c.expr(x.Rhs)
	case *ast.UnaryMinusOpExpr:
		c.expr(x.Expr)
	case *ast.UnaryNotOpExpr:
		c.expr(x.Expr)
	case *ast.UnaryLenOpExpr:
		c.expr(x.Expr)
	}
}

// fieldValue looks at a string literal stored under a field name: status in a health script, kind and
// operation in an action.
func (c *checker) fieldValue(field string, value ast.Expr, line int) {
	lit, ok := value.(*ast.StringExpr)
	if !ok || field == "" {
		return
	}
	if l := lit.Line(); l > 0 {
		line = l
	}
	switch {
	case field == "status" && c.script.Role == Health && !validStatuses[lit.Value]:
		c.statuses = append(c.statuses, statusLiteral{holder: c.holder, value: lit.Value, line: line})
	case field == "operation" && lit.Value == "create":
		c.creates = true
	case field == "kind" && c.script.Role == Action:
		c.kinds = append(c.kinds, kindLiteral{lit.Value, line})
	}
}

func (c *checker) noLibs() string {
	if c.script.Role == Health {
		return "no string, math, os or io library without resource.customizations.useOpenLibs for this kind"
	}
	return "Argo CD runs " + c.script.Role.String() + " scripts without string, math, os or io libraries"
}

// fieldName is the constant field an assignment target names (x.status, x["status"]), or "".
func fieldName(e ast.Expr) string {
	if a, ok := e.(*ast.AttrGetExpr); ok {
		if k, ok := a.Key.(*ast.StringExpr); ok {
			return k.Value
		}
	}
	return ""
}

// holderName is the variable whose field an assignment target sets (hs for hs.status), or "".
func holderName(e ast.Expr) string {
	if a, ok := e.(*ast.AttrGetExpr); ok {
		if id, ok := a.Object.(*ast.IdentExpr); ok {
			return id.Value
		}
	}
	return "\x00"
}

func isRequireOs(e ast.Expr) bool {
	call, ok := e.(*ast.FuncCallExpr)
	if !ok || call.Receiver != nil || len(call.Args) != 1 {
		return false
	}
	fn, ok := call.Func.(*ast.IdentExpr)
	arg, ok2 := call.Args[0].(*ast.StringExpr)
	return ok && ok2 && fn.Value == "require" && arg.Value == "os"
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
