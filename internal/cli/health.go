package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
	goyaml "sigs.k8s.io/yaml/goyaml.v2"

	"github.com/analysis-health/analysis-health/internal/install/argocdcm"
	"github.com/analysis-health/analysis-health/internal/install/argocdcm/builtin"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
	"github.com/analysis-health/analysis-health/internal/ordered"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
)

type healthFlags struct {
	files    []string
	argocdCM string
	openLibs bool
	version  profileValue
	output   *enumValue
}

// HealthRow is one evaluated object; the JSON and YAML outputs are arrays of these.
type HealthRow struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	Message    string `json:"message"`
	// Script says where the script came from: bundled, argocd-cm, or none.
	Script string `json:"script"`
	// File is the file the object was read from ("-": standard input), so that equal rows from two
	// files of a folder can be told apart.
	File string `json:"file"`
}

func newHealthCommand(o *Options) *cobra.Command {
	f := &healthFlags{output: newEnum("table", "table", "json", "yaml")}
	cmd := &cobra.Command{
		Use:   "health -f FILE [-f FILE...]",
		Short: "Evaluate the health of objects as Argo CD would with these scripts",
		Long: `health evaluates the health of every object in the input with the bundled health scripts (or,
with --argocd-cm, those of an argocd-cm ConfigMap or of the merge patch generate --format patch
writes) in the sandbox Argo CD runs them in, for the release line --argocd-version names, and
prints one row per object: kind, namespace, name, status and message, and the file first when the
rows come from more than one (-o json and -o yaml add apiVersion, the file, and where the script
came from: bundled, argocd-cm or none).

The input is files, folders (their .yaml, .yml and .json files) and - for standard input:
multi-document YAML, JSON, kind: List, as kubectl get -o yaml prints it. A kind no script here
covers (a Deployment, say) is listed as not evaluated, naming the health Argo CD gives it instead:
its built-in Lua script, gitops-engine's Go check, or none.

It exits 0 once every object is read, whatever its health. A document that is not a Kubernetes
object, and a file without a single object (empty, comments only), is a one-line error naming the
file and document on standard error and exit status 1; the other files are still evaluated. An
empty List (kubectl get on a cluster with none of the kinds) is an answer, not an error: a note on
standard error, no rows (an empty array with -o json or yaml) and exit 0. See
docs/health-semantics.md.

An argocd-cm whose health script asks for open libraries (resource.customizations.useOpenLibs) is
refused unless --open-libs: with them the script could run programs and read files on this machine.
Without --open-libs no script reads a file here: dofile, loadfile and require of a module file are
refused, although Argo CD's controller opens them on every script (its base library); with
--open-libs every script runs as Argo CD's controller runs it.`,
		Example: `  analysis-health health -f testdata/examples/canary-analysis.yaml
  kubectl get rollouts -A -o yaml | analysis-health health -f - -o json
  analysis-health health -f rollout.yaml --argocd-cm argocd-cm.yaml --argocd-version v3`,
		Args: fileAsArgument,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(f.files) == 0 {
				return usageError("at least one -f FILE is required (use - for standard input)")
			}
			return runHealth(o, f)
		},
	}
	cmd.Flags().StringArrayVarP(&f.files, "filename", "f", nil, "file, folder or - (stdin) with YAML/JSON objects; repeatable")
	cmd.Flags().StringVar(&f.argocdCM, "argocd-cm", "", "use the health scripts of this argocd-cm ConfigMap, or of the merge patch generate --format patch writes, instead of the bundled ones")
	cmd.Flags().BoolVar(&f.openLibs, "open-libs", false, "run argocd-cm health scripts with useOpenLibs with open libraries, and let every script dofile, loadfile and require files, as Argo CD's controller does (they can run programs and read files on this machine)")
	addVersionFlag(cmd, &f.version, "Argo CD release line to reproduce")
	cmd.Flags().VarP(f.output, "output", "o", "output format: table|json|yaml")
	return cmd
}

// scriptSource finds the health script for an object.
type scriptSource func(group, kind string) (script string, openLibs bool, origin string)

func bundledScripts(group, kind string) (string, bool, string) {
	s, err := lua.Health(group, kind)
	if err != nil {
		return "", false, "none"
	}
	return s, false, "bundled"
}

// configMapScripts reads the health scripts of an argocd-cm. One asking for open libraries is refused
// unless openLibs: a ConfigMap under review is input data, and gopher-lua's full libraries (os.execute,
// io.open) would let it run programs and read files on this machine.
func configMapScripts(path string, openLibs bool) (scriptSource, error) {
	data, err := readArgoCDCM(path, nil)
	if err != nil {
		return nil, err
	}
	ov, err := argocdcm.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	keys := make([]string, 0, len(ov))
	for key := range ov {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		o := ov[key]
		if o.HealthLua == "" {
			continue
		}
		if o.UseOpenLibs && !openLibs {
			return nil, fmt.Errorf("%s: %s asks for open libraries for the health script of %s, which could then run programs and read files on this machine; pass --open-libs to run it as Argo CD would",
				path, openLibsKey(data, key), key)
		}
		if err := engine.CheckSyntax(o.HealthLua); err != nil {
			return nil, fmt.Errorf("%s: health script for %s: %w", path, key, err)
		}
	}
	return func(group, kind string) (string, bool, string) {
		s, open, ok := ov.HealthScript(group, kind)
		if !ok {
			return "", false, "none"
		}
		return s, open, "argocd-cm"
	}, nil
}

// openLibsKey names the argocd-cm key that set useOpenLibs for key: its split key, or the legacy
// resource.customizations entry.
func openLibsKey(data map[string]string, key string) string {
	suffix := strings.ReplaceAll(key, "/", "_")
	if key == "*/*" {
		suffix = "all"
	}
	if k := "resource.customizations.useOpenLibs." + suffix; data[k] != "" {
		return k
	}
	return fmt.Sprintf("resource.customizations (%s: health.lua.useOpenLibs)", key)
}

func runHealth(o *Options, f *healthFlags) error {
	source := bundledScripts
	if f.argocdCM != "" {
		s, err := configMapScripts(f.argocdCM, f.openLibs)
		if err != nil {
			return err
		}
		source = s
	}
	// --open-libs also gives every script the base library's file access Argo CD's controller gives it
	// (engine.Engine.FileAccess); without it a script reads no file of this machine
	base := engine.Engine{Profile: f.version.p, FileAccess: f.openLibs}
	rows, bad, lists, err := evaluateAll(manifest.NewReader(f.files, o.In), source, base)
	if err != nil {
		return err
	}
	// An empty List is what kubectl get prints when a cluster has none of the kinds asked for: an
	// answer, not a broken input, so it exits 0 (a loop over clusters goes on), with a note on stderr
	// that nothing was evaluated there.
	for _, l := range lists {
		fmt.Fprintf(o.ErrOut, "%s: an empty List: no objects to evaluate\n", l)
	}
	if len(rows) == 0 && len(bad) == 0 && len(lists) == 0 {
		return manifest.ErrNoObjects
	}
	if len(rows) == 0 && (len(bad) > 0 || f.output.String() == "table") {
		return reportBad(o, bad)
	}
	if rows == nil {
		rows = []HealthRow{} // -o json and -o yaml print an empty array, which jq and yq read as none
	}
	// Rows are small beside the objects they come from; holding them until the end means an error in the
	// last object still leaves stdout empty. The table names the file only when there is more than one.
	var b bytes.Buffer
	if err := writeRows(&b, f.output.String(), rows, manyFiles(rows)); err != nil {
		return err
	}
	if _, err = o.Out.Write(b.Bytes()); err != nil {
		return err
	}
	return reportBad(o, bad)
}

// reportBad prints the documents that are not Kubernetes objects, one line each, and makes the exit
// status 1: a folder with one stray file (Rollouts' examples/ has a dashboard.json) is still evaluated.
func reportBad(o *Options, bad []error) error {
	if len(bad) == 0 {
		return nil
	}
	for _, e := range bad {
		fmt.Fprintf(o.ErrOut, "Error: %s\n", e)
	}
	return &ExitError{Code: 1}
}

// evaluateAll decodes and evaluates the input unit by unit on every core, keeping only the rows: memory
// stays at the input's bytes plus the objects in flight, whatever the number of objects. Rows come in
// input order, and the error returned is the first one in input order.
//
// A List cut into items is decoded whole instead as soon as one of its items fails to decode or to check
// on its own (manifest.ErrSplit): the rows taken from its earlier items are dropped and the document is
// evaluated from its general decoding, so the outcome is always that of decoding each document whole.
//
// A document that does not decode is no reason to stop: it is returned in bad, in input order, and the
// rest is evaluated.
//
// A source whose only documents are empty Lists is no error: it is returned in lists.
func evaluateAll(r *manifest.Reader, source scriptSource, base engine.Engine) (rows []HealthRow, bad []error, lists []string, err error) {
	type result struct {
		u         manifest.Unit
		rows      []HealthRow
		decoded   bool // false: the unit did not decode on its own
		decodeErr error
		emptyList bool
	}
	listed := map[string]bool{} // the sources with an empty List
	var docStart int            // index in rows of the current document's first row
	var docKey, skip string     // the current document; a document decoded whole, whose other units are ignored
	held := map[string]bool{}   // the sources with an object or a document reported in bad
	defer func() {
		if err == nil {
			bad = append(bad, r.Unreadable()...)
			for _, s := range r.Sources() {
				if !held[s] && listed[s] {
					lists, held[s] = append(lists, s), true
				}
			}
			bad = append(bad, emptySources(r.Sources(), held)...)
		}
	}()
	err = ordered.Map(0, r.Next, func(u manifest.Unit) (result, error) {
		rs, decodeErr, err := evaluateUnit(u, source, base)
		if decodeErr != nil {
			if u.Item > 0 {
				return result{u: u}, nil
			}
			return result{u: u, decoded: true, decodeErr: decodeErr}, nil
		}
		empty := err == nil && len(rs) == 0 && u.EmptyList()
		return result{u: u, rows: rs, decoded: true, emptyList: empty}, err
	}, func(res result) error {
		file, doc := res.u.Document()
		key := fmt.Sprintf("%s\x00%d", file, doc)
		if key != docKey {
			docKey, docStart = key, len(rows)
		}
		if key == skip {
			return nil
		}
		if res.decodeErr != nil {
			bad, held[file] = append(bad, res.decodeErr), true
			return nil
		}
		if !res.decoded {
			rows, skip = rows[:docStart], key
			objs, err := res.u.DecodeDocument()
			if err != nil {
				bad, held[file] = append(bad, err), true
				return nil
			}
			rs, err := evaluate(objs, source, base)
			rows = append(rows, rs...)
			held[file] = held[file] || len(rs) > 0
			return err
		}
		rows = append(rows, res.rows...)
		held[file] = held[file] || len(res.rows) > 0
		listed[file] = listed[file] || res.emptyList
		return nil
	})
	return rows, bad, lists, err
}

// emptySources are the errors for the sources without a single object (an empty file, comments only, a
// lone ---, null; an empty List is no error), in input order: each is as much a broken input as a stray document,
// so the other files are still evaluated and the exit status is 1.
func emptySources(sources []string, held map[string]bool) []error {
	var errs []error
	for _, s := range sources {
		if held[s] {
			continue
		}
		what := "the file is empty"
		if s == "-" {
			what = "standard input is empty"
		}
		errs = append(errs, fmt.Errorf("%s: %w: %s (or holds only comments, --- or null)", s, manifest.ErrNoObjects, what))
	}
	return errs
}

// evaluateUnit decodes and evaluates one unit. decodeErr is a failure to decode or check it, err a
// script's failure.
func evaluateUnit(u manifest.Unit, source scriptSource, base engine.Engine) (rows []HealthRow, decodeErr, err error) {
	profile := base.Profile
	// An item of a JSON List goes to the engine as JSON, which builds its Lua tables without Go maps in
	// between; anything else, and an item that is not JSON after all, is decoded first.
	// An object being deleted takes the decoded path, where the profile's deletion handling reads its
	// metadata as Argo CD does.
	if obj, item, ok, herr := u.Header(); ok && !deleting(obj) {
		if herr != nil {
			return nil, herr, nil
		}
		row, script, openLibs := newRow(obj, source, profile)
		if script != "" {
			h, err := engine.Engine{Profile: profile, OpenLibs: openLibs, FileAccess: base.FileAccess, ReuseStates: true}.ExecuteJSON(item, script)
			if !errors.Is(err, engine.ErrInvalidJSON) {
				if err != nil {
					return nil, nil, scriptError(obj, err)
				}
				return []HealthRow{row.with(obj, h)}, nil, nil
			}
		}
	}
	objs, err := u.Decode()
	if err != nil {
		return nil, err, nil
	}
	rows, err = evaluate(objs, source, base)
	return rows, nil, err
}

func evaluate(objs []manifest.Object, source scriptSource, base engine.Engine) ([]HealthRow, error) {
	profile := base.Profile
	rows := make([]HealthRow, 0, len(objs))
	for _, obj := range objs {
		row, script, openLibs := newRow(obj, source, profile)
		// What gitops-engine records: the profile's deletion handling, v3.6's "no health"; an object being
		// deleted is Progressing "Pending deletion" in every release even without a script.
		h, err := engine.Engine{Profile: profile, OpenLibs: openLibs, FileAccess: base.FileAccess, ReuseStates: true}.ResourceHealth(obj.Object, script)
		if err != nil {
			// The Health carries the script's own error, without gitops-engine's wrapping.
			return nil, scriptError(obj, errors.New(h.Message))
		}
		if script == "" && h == nil {
			rows = append(rows, row)
			continue
		}
		rows = append(rows, row.with(obj, h))
	}
	return rows, nil
}

// deleting reports a header with metadata.deletionTimestamp, whatever its value (the header's keys are
// unescaped, so an escaped spelling is found too).
func deleting(obj manifest.Object) bool {
	m, _ := obj.Object["metadata"].(map[string]any)
	_, ok := m["deletionTimestamp"]
	return ok
}

// newRow starts obj's row and finds its script; without one the row is complete, and says what Argo CD
// uses instead.
func newRow(obj manifest.Object, source scriptSource, profile engine.Profile) (row HealthRow, script string, openLibs bool) {
	row = HealthRow{APIVersion: obj.APIVersion(), Kind: obj.Kind(), Namespace: obj.Namespace(), Name: obj.Name(), File: obj.Source}
	script, openLibs, row.Script = source(obj.Group(), obj.Kind())
	if script == "" {
		row.Message = withoutScript(obj.Group(), obj.Kind(), profile)
	}
	return row, script, openLibs
}

// withoutScript says which health Argo CD gives a kind this tool has no script for: its built-in Lua
// script (internal/install/argocdcm/builtin, the release's own resource_customizations list; Argo CD tries it first, util/lua
// GetHealthScript), else gitops-engine's Go check, else none. Neither is evaluated here: the CLI ships no
// Argo CD code.
func withoutScript(group, kind string, profile engine.Profile) string {
	key := argocdcm.ConfigMapKey(group, kind)
	if ix, err := builtin.For(profile.String()); err == nil {
		if p, _, ok := ix.Health(key); ok {
			return fmt.Sprintf("not evaluated: no script here for %s; Argo CD %s uses its built-in resource_customizations/%s", key, profile, p)
		}
	}
	if engine.GoHealthCheck(group, kind) {
		return fmt.Sprintf("not evaluated: no script here for %s; Argo CD uses gitops-engine's built-in Go health check", key)
	}
	return fmt.Sprintf("no health script for %s, and Argo CD %s has no built-in one: it reports no health", key, profile)
}

// with completes the row with h; a nil h is "no health" (a v3.6 script returned nil).
func (r HealthRow) with(obj manifest.Object, h *engine.Health) HealthRow {
	switch {
	case h != nil:
		r.Status, r.Message = h.Status, h.Message
	case engine.GoHealthCheck(obj.Group(), obj.Kind()):
		r.Message = fmt.Sprintf("no health: the script returned nil, so Argo CD uses its built-in check for %s", argocdcm.ConfigMapKey(obj.Group(), obj.Kind()))
	default:
		r.Message = "no health: the script returned nil"
	}
	return r
}

func scriptError(obj manifest.Object, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %s %s: health script failed: %w", obj.Where(), obj.Kind(), obj.Name(), err)
}

// manyFiles reports rows read from more than one file.
func manyFiles(rows []HealthRow) bool {
	for _, r := range rows {
		if r.File != rows[0].File {
			return true
		}
	}
	return false
}

// writeRows prints rows as format; withFile adds a FILE column to the table (json and yaml always carry
// the file).
func writeRows(w io.Writer, format string, rows []HealthRow, withFile bool) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case "yaml":
		return writeYAMLRows(w, rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	file := func(r HealthRow) string { return "" }
	if withFile {
		fmt.Fprint(tw, "FILE\t")
		file = func(r HealthRow) string { return r.File + "\t" }
	}
	fmt.Fprintln(tw, "KIND\tNAMESPACE\tNAME\tSTATUS\tMESSAGE")
	for _, r := range rows {
		status := r.Status
		if status == "" {
			status = "-"
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\n", file(r), r.Kind, dash(r.Namespace), r.Name, status, r.Message)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeYAMLRows prints what sigs.k8s.io/yaml's Marshal prints for rows (JSON, then YAML from it: keys
// sorted, strings made valid UTF-8 the way encoding/json makes them), without the JSON in between and
// in chunks on every core: the items of a top-level sequence are printed independently of one another, so
// the chunks put together are the whole. Through JSON, 10,000 rows took longer than evaluating them.
// asYAML writes what writeJSON writes as YAML, the fields named as in JSON (sigs.k8s.io/yaml), the way
// kubectl -o yaml shows what -o json does.
func asYAML(w io.Writer, writeJSON func(io.Writer) error) error {
	var b bytes.Buffer
	if err := writeJSON(&b); err != nil {
		return err
	}
	out, err := yaml.JSONToYAML(b.Bytes())
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

func writeYAMLRows(w io.Writer, rows []HealthRow) error {
	if len(rows) == 0 {
		b, err := yaml.Marshal(rows)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	const chunk = 500
	next := 0
	return ordered.Map(0, func() ([]HealthRow, bool, error) {
		if next >= len(rows) {
			return nil, false, nil
		}
		end := min(next+chunk, len(rows))
		c := rows[next:end]
		next = end
		return c, true, nil
	}, func(c []HealthRow) ([]byte, error) {
		items := make([]map[string]string, len(c))
		for i, r := range c {
			items[i] = map[string]string{
				"apiVersion": jsonString(r.APIVersion), "kind": jsonString(r.Kind), "namespace": jsonString(r.Namespace),
				"name": jsonString(r.Name), "status": jsonString(r.Status), "message": jsonString(r.Message), "script": jsonString(r.Script),
				"file": jsonString(r.File),
			}
		}
		return goyaml.Marshal(items)
	}, func(b []byte) error {
		_, err := w.Write(b)
		return err
	})
}

// jsonString is s as it comes back from encoding/json: every invalid UTF-8 byte replaced by U+FFFD.
func jsonString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
