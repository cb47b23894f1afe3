package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	luajson "layeh.com/gopher-json"

	"github.com/analysis-health/analysis-health/verify/result"
)

// Action is one entry of a discovery result, Argo CD's v1alpha1.ResourceAction. It is defined in the
// public result package so that verify's suites, which hold these, can be named by a user's module.
type Action = result.Action

// ActionParam is Argo CD's v1alpha1.ResourceActionParam (result.ActionParam).
type ActionParam = result.ActionParam

// Operation is what Argo CD's API server does with an object an action returns (util/lua
// impacted_resource.go K8SOperation).
type Operation string

const (
	// Patch merges the returned object into the live one; an action returning one object means this.
	Patch Operation = "patch"
	// Create creates the returned object (actions returning a list, Argo CD 2.8+).
	Create Operation = "create"
)

// Impacted is one object an action returns, Argo CD's ImpactedResource. Operation is empty when the
// script's list entry had no "operation" field: Argo CD accepts that too and leaves it to the API server.
type Impacted struct {
	Operation Operation
	Object    map[string]any
}

// Messages Argo CD produces itself (util/lua/lua.go), compared exactly by the conformance tests.
const (
	errNoDiscoveryScript = "no action discovery script provided"
	errNotJSON           = "Lua output was not a valid json object or array"
)

// Discover runs discovery scripts against obj and merges their results the way Argo CD's
// ExecuteResourceActionDiscovery does: scripts run in order, an entry whose name an earlier script
// returned is ignored (argocd-cm's custom discovery runs before the built-in one with
// mergeBuiltinActions: true, so it wins), an empty table means no actions, and an entry's value is
// decoded into a ResourceAction. Argo CD returns the actions in map order; they are sorted by name here.
func (e Engine) Discover(obj map[string]any, scripts ...string) ([]Action, error) {
	if len(scripts) == 0 {
		return nil, errors.New(errNoDiscoveryScript)
	}
	found := map[string]Action{}
	for _, script := range scripts {
		var entries map[string]any
		err := e.run(obj, script, nil, func(ret lua.LValue) error {
			if ret.Type() != lua.LTTable {
				return fmt.Errorf(incorrectReturnType, "table", ret.Type().String())
			}
			if err := checkReturned(ret); err != nil {
				return err
			}
			raw, err := luajson.Encode(ret)
			if err != nil {
				return fmt.Errorf("error in converting to lua table: %w", err)
			}
			if string(raw) == "[]" {
				// An empty table encodes as an empty array: no actions from this script.
				return nil
			}
			if err := json.Unmarshal(raw, &entries); err != nil {
				return fmt.Errorf("error unmarshaling action table: %w", err)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, name := range sortedKeys(entries) {
			if _, seen := found[name]; seen {
				continue
			}
			a, err := e.decodeAction(name, entries[name])
			if err != nil {
				return nil, err
			}
			found[name] = a
		}
	}
	out := make([]Action, 0, len(found))
	for _, name := range sortedKeys(found) {
		out = append(out, found[name])
	}
	return out, nil
}

// decodeAction turns one discovery entry into an Action. Argo CD reads "disabled" only when it is a
// boolean, treats an empty table (encoded as []) as an enabled action, and otherwise unmarshals the entry
// over {Name: key, Disabled: ...}, so a "name" field renames the action and a field of the wrong type fails.
func (e Engine) decodeAction(name string, v any) (Action, error) {
	a := Action{Name: name}
	if m, ok := v.(map[string]any); ok {
		if d, ok := m["disabled"].(bool); ok {
			a.Disabled = d
		}
	}
	if _, ok := v.([]any); ok {
		return a, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return Action{}, fmt.Errorf("error marshaling resource action: %w", err)
	}
	if e.Profile.AtLeast(V32) {
		return decodeV3Action(a, raw, e.Profile.AtLeast(V36))
	}
	return decodeV2Action(a, raw)
}

// The decode targets mirror Argo CD's types field for field and are named like them, so that encoding/json
// reports a mistyped field exactly as Argo CD does ("Go struct field ResourceAction.disabled of type
// bool"); argoTypeNames fixes the package qualifier.

func decodeV2Action(a Action, raw []byte) (Action, error) {
	type ResourceActionParam struct {
		Name    string `json:"name,omitempty"`
		Value   string `json:"value,omitempty"`
		Type    string `json:"type,omitempty"`
		Default string `json:"default,omitempty"`
	}
	type ResourceAction struct {
		Name        string                `json:"name,omitempty"`
		Params      []ResourceActionParam `json:"params,omitempty"`
		Disabled    bool                  `json:"disabled,omitempty"`
		IconClass   string                `json:"iconClass,omitempty"`
		DisplayName string                `json:"displayName,omitempty"`
	}
	ra := ResourceAction{Name: a.Name, Disabled: a.Disabled}
	if err := json.Unmarshal(raw, &ra); err != nil {
		return Action{}, fmt.Errorf("error unmarshaling resource action: %w", argoTypeNames(err))
	}
	out := Action{Name: ra.Name, Disabled: ra.Disabled, IconClass: ra.IconClass, DisplayName: ra.DisplayName}
	for _, p := range ra.Params {
		out.Params = append(out.Params, ActionParam(p))
	}
	return out, nil
}

func decodeV3Action(a Action, raw []byte, jsonV2 bool) (Action, error) {
	type ResourceActionParam struct {
		Name string `json:"name,omitempty"`
	}
	type ResourceAction struct {
		Name        string                `json:"name,omitempty"`
		Params      []ResourceActionParam `json:"params,omitempty"`
		Disabled    bool                  `json:"disabled,omitempty"`
		IconClass   string                `json:"iconClass,omitempty"`
		DisplayName string                `json:"displayName,omitempty"`
	}
	ra := ResourceAction{Name: a.Name, Disabled: a.Disabled}
	if err := json.Unmarshal(raw, &ra); err != nil {
		if jsonV2 {
			err = paramsErrorV2(raw, err)
		}
		return Action{}, fmt.Errorf("error unmarshaling resource action: %w", argoTypeNames(err))
	}
	out := Action{Name: ra.Name, Disabled: ra.Disabled, IconClass: ra.IconClass, DisplayName: ra.DisplayName}
	for _, p := range ra.Params {
		out.Params = append(out.Params, ActionParam{Name: p.Name})
	}
	return out, nil
}

// paramsErrorV2 words a type error inside params as Go 1.27's encoding/json does (it runs on json/v2 and
// names the failing element by its index), which is what Argo CD v3.6, built with Go 1.27, reports,
// whichever Go builds this engine. Other errors read the same in both.
func paramsErrorV2(raw []byte, err error) error {
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) || !strings.HasPrefix(typeErr.Field, "params") || typeErr.Type.Kind() == reflect.Slice {
		return err
	}
	var entry struct {
		Params []json.RawMessage `json:"params"`
	}
	if json.Unmarshal(raw, &entry) != nil {
		return err
	}
	for i, p := range entry.Params {
		var fields struct {
			Name json.RawMessage `json:"name"`
		}
		if p[0] != '{' {
			if string(p) == "null" {
				continue
			}
			return fmt.Errorf("json: cannot unmarshal %s into ResourceAction.params.%d of type v1alpha1.ResourceActionParam", jsonKind(p), i)
		}
		if json.Unmarshal(p, &fields) == nil && len(fields.Name) > 0 && fields.Name[0] != '"' && string(fields.Name) != "null" {
			return fmt.Errorf("json: cannot unmarshal %s into Go struct field ResourceAction.params.%d.name of type string", jsonKindV2(fields.Name), i)
		}
	}
	return err
}

// jsonKindV2 is jsonKind, but for objects.
func jsonKindV2(raw []byte) string {
	if raw[0] == '{' {
		return "object"
	}
	return jsonKind(raw)
}

// argoTypeNames rewrites our decode targets' package qualifier into Argo CD's.
func argoTypeNames(err error) error {
	msg := err.Error()
	fixed := strings.NewReplacer(
		"engine.ResourceActionParam", "v1alpha1.ResourceActionParam",
		"engine.ResourceAction", "v1alpha1.ResourceAction",
		"engine.ImpactedResource", "lua.ImpactedResource",
	).Replace(msg)
	if fixed == msg {
		return err
	}
	return &renamedError{msg: fixed, err: err}
}

type renamedError struct {
	msg string
	err error
}

func (r *renamedError) Error() string { return r.msg }
func (r *renamedError) Unwrap() error { return r.err }

// RunAction runs an action script against obj and returns what Argo CD's ExecuteResourceAction returns:
// one object means a patch of obj; a list holds {operation = "create"|"patch", resource = {...}} entries.
// Returned objects are decoded like Kubernetes' unstructured JSON (integers as int64, a kind required),
// and patched objects go through Argo CD's cleanReturnedObj for the profile: an empty table where obj had
// a map becomes that map again (v2: the old, non-empty map, so clearing a map is silently undone; v3: an
// empty map). params become the global actionParams under the v3 profiles; Argo CD v2 actions take none.
func (e Engine) RunAction(obj map[string]any, script string, params map[string]string) ([]Impacted, error) {
	if !e.Profile.AtLeast(V32) && len(params) > 0 {
		return nil, errors.New("action parameters need Argo CD v3: v2 has no actionParams")
	}
	var out []Impacted
	err := e.run(obj, script, params, func(ret lua.LValue) error {
		if ret.Type() != lua.LTTable {
			return fmt.Errorf(incorrectReturnType, "table", ret.Type().String())
		}
		raw, err := encodeReturned(ret)
		if err != nil {
			return err
		}
		if len(raw) < 2 {
			return errors.New(errNotJSON)
		}
		if raw[0] == '[' && raw[len(raw)-1] == ']' {
			out, err = decodeImpacted(raw, e.Profile.AtLeast(V36))
		} else {
			var o map[string]any
			o, err = decodeObject(raw)
			out = []Impacted{{Operation: Patch, Object: o}}
		}
		if err != nil {
			return err
		}
		for i := range out {
			if out[i].Operation != Patch {
				continue
			}
			if out[i].Object == nil {
				// Argo CD dereferences the missing object and panics.
				return fmt.Errorf("action output entry %d: operation patch without a resource", i+1)
			}
			cleaned, err := e.cleanMap(out[i].Object, obj, "")
			if err != nil {
				return err
			}
			out[i].Object = cleaned
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// decodeImpacted decodes the list form as encoding/json decodes Argo CD's []ImpactedResource: fields are
// met in key order (gopher-json sorts them) and matched case-insensitively; an operation other than
// "create" or "patch" and an undecodable resource fail at once, while an entry that is not an object is a
// type error reported only if nothing else fails.
func decodeImpacted(raw []byte, jsonV2 bool) ([]Impacted, error) {
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, err
	}
	out := make([]Impacted, 0, len(entries))
	var typeErr error
	for i, entry := range entries {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(entry, &fields); err != nil {
			if typeErr == nil {
				typeErr = fmt.Errorf("json: cannot unmarshal %s into Go value of type lua.ImpactedResource", jsonKind(entry))
				if jsonV2 {
					typeErr = fmt.Errorf("json: cannot unmarshal %s into .%d of type lua.ImpactedResource", jsonKind(entry), i)
				}
			}
			out = append(out, Impacted{})
			continue
		}
		var imp Impacted
		for _, key := range sortedKeys(fields) {
			value := fields[key]
			switch {
			case strings.EqualFold(key, "operation"):
				switch string(value) {
				case `"create"`:
					imp.Operation = Create
				case `"patch"`:
					imp.Operation = Patch
				default:
					return nil, fmt.Errorf("unsupported operation: %s", value)
				}
			case strings.EqualFold(key, "resource"):
				o, err := decodeObject(value)
				if err != nil {
					// Go 1.26's encoding/json names the field a type error happened in; Go 1.27's (json/v2,
					// which builds Argo CD v3.6) does not when unstructured's own decoder failed.
					var typeErr *json.UnmarshalTypeError
					if errors.As(err, &typeErr) {
						typeErr.Struct, typeErr.Field = "ImpactedResource", "resource"
						if jsonV2 {
							typeErr.Struct, typeErr.Field = "", ""
						}
					}
					return nil, err
				}
				imp.Object = o
			}
		}
		out = append(out, imp)
	}
	if typeErr != nil {
		return nil, typeErr
	}
	return out, nil
}

func jsonKind(raw []byte) string {
	switch raw[0] {
	case '"':
		return "string"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// decodeObject decodes one returned object as apimachinery's unstructured JSON scheme does: integers
// without a decimal point that fit become int64, other numbers float64, and an object without a string
// kind is rejected with the scheme's message.
func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	m = convertNumbers(m).(map[string]any)
	if kind, _ := m["kind"].(string); kind == "" {
		return nil, fmt.Errorf("Object 'Kind' is missing in '%s'", raw)
	}
	return m, nil
}

func convertNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, item := range x {
			x[k] = convertNumbers(item)
		}
		return x
	case []any:
		for i, item := range x {
			x[i] = convertNumbers(item)
		}
		return x
	case json.Number:
		s := string(x)
		if !strings.Contains(s, ".") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i
			}
		}
		f, _ := strconv.ParseFloat(s, 64)
		return f
	}
	return v
}

// cleanMap is Argo CD's cleanReturnedObj: Lua cannot tell an empty map from an empty list, so wherever
// the original object had a map and the script returned an empty list, put a map back, recursing into
// maps and lists both sides have. A key the script added or removed is left alone.
func (e Engine) cleanMap(returned, original map[string]any, path string) (map[string]any, error) {
	for _, key := range sortedKeys(original) {
		newValue, ok := returned[key]
		if !ok {
			continue
		}
		oldValue := original[key]
		switch nv := newValue.(type) {
		case map[string]any:
			if ov, ok := oldValue.(map[string]any); ok {
				cleaned, err := e.cleanMap(nv, ov, path+"."+key)
				if err != nil {
					return nil, err
				}
				returned[key] = cleaned
			}
		case []any:
			switch ov := oldValue.(type) {
			case map[string]any:
				if len(nv) == 0 {
					if e.Profile.AtLeast(V32) {
						returned[key] = map[string]any{}
					} else {
						// v2.14 puts the original map back: an action cannot clear a map.
						returned[key] = deepCopy(ov)
					}
				}
			case []any:
				cleaned, err := e.cleanList(nv, ov, path+"."+key)
				if err != nil {
					return nil, err
				}
				returned[key] = cleaned
			}
		}
	}
	return returned, nil
}

// cleanList is Argo CD's cleanReturnedArray. v3 stops at the end of the original list; v2.14 indexes past
// it and panics when an action appends a map or a list, which is reported as an error here.
func (e Engine) cleanList(returned, original []any, path string) ([]any, error) {
	for i, newValue := range returned {
		if i >= len(original) {
			if e.Profile.AtLeast(V32) {
				break
			}
			switch newValue.(type) {
			case map[string]any, []any:
				return nil, fmt.Errorf("action appended an object or list to %s: Argo CD v2.14 fails on this (runtime error: index out of range [%d] with length %d)",
					strings.TrimPrefix(path, "."), i, len(original))
			}
			continue
		}
		switch nv := newValue.(type) {
		case map[string]any:
			if ov, ok := original[i].(map[string]any); ok {
				cleaned, err := e.cleanMap(nv, ov, fmt.Sprintf("%s[%d]", path, i))
				if err != nil {
					return nil, err
				}
				returned[i] = cleaned
			}
		case []any:
			if ov, ok := original[i].([]any); ok {
				cleaned, err := e.cleanList(nv, ov, fmt.Sprintf("%s[%d]", path, i))
				if err != nil {
					return nil, err
				}
				returned[i] = cleaned
			}
		}
	}
	return returned, nil
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, item := range x {
			m[k] = deepCopy(item)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, item := range x {
			l[i] = deepCopy(item)
		}
		return l
	}
	return v
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
