package benchdoc

// notes is the page's fixed text after the tables: how the scripts are laid out for each VM and why.
const notes = `
## How the forms are made

One source per script in ` + "`lua/`" + `; the generator (` + "`generator/forms.go`" + `) derives, per ` + "`--argocd-version`" + `:

* **lazy** (v2.x, v3.0–v3.5): the source minified (` + "`generator/minify.go`" + `). Comments and whitespace go (the lexer
  reads every byte of them on every call), and locals get the shortest names that change nothing (only names
  never used as a global, a key or a string, and none of the options block); the long strings that hold the
  rare paths stay, minified and renamed alike, and are compiled by ` + "`loadstring`" + ` only for the objects that
  reach them. The generator proves the minified script compiles to the same instructions, constants,
  registers and local positions as the source, chunk by chunk, with local names equal under the renaming.
* **flat** (v3.6+): every ` + "`loadstring([[…]])`" + ` becomes ` + "`(function(…) … end)`" + ` of the same body, so the whole
  script is compiled once into Argo CD's cache. The generator refuses a chunk whose global names would
  become locals of the enclosing script once inlined.
* The ` + "`lua`" + ` format and ` + "`verify`" + ` keep the source.

Every form returns what the source returns on every fixture and on the fuzz corpus (` + "`generator`" + `'s
` + "`TestFormsEqualSourceOnFixtures`" + `, ` + "`lua`" + `'s ` + "`TestMutatedFixtures`" + ` and ` + "`FuzzScripts`" + `, whose seeds include the
worst-case objects of ` + "`internal/bench/worstcase`" + `); golden files of each form are in ` + "`generator/testdata/forms/`" + `.

## What each script parses, and the messages kept at a cost

A VM that parses every call pays for every token of the main chunk and every byte of the long strings on
every evaluation, and for a lazily compiled chunk's tokens when an object reaches it (about 0.25 µs a token
and a fixed ~15 µs a chunk, measured with gopher-lua here); a VM that caches pays for what runs. So:

* **Rollout**: the parsed path is the generation gates, the four run statuses, the current experiment and
  the inconclusive pauses, and the controller's phase; it builds no table it does not return. Analysis in
  flight compiles a short chunk (runs passed or measuring → Progressing with the runs listed) that declines
  anything else; a Degraded phase or an inconclusive pause goes straight to the full rules; pre-v1.0
  controllers get the legacy chunk. Each chunk reads what it needs from ` + "`status`" + ` itself, so the parsed
  path passes it one argument.
* **AnalysisRun**: the parsed path answers a Successful run and a run still measuring, with the
  per-metric progress (` + "`Analysis run is running: success-rate 3/5 measurements`" + `); verdicts, dry-run
  notes and unknown phases compile from one long string, a verdict's words (the rebuilt assessment, the
  why: last value and condition, or Job) from a second inside it.
* **Experiment**: the parsed path defines no function and only tells the phases apart; the waiting list and
  the verdicts compile from long strings.

Every rewrite returns what the previous script returned (` + "`lua`" + `'s ` + "`TestSameAsPrevious`" + `: the previous
scripts are kept in ` + "`lua/testdata/previous/`" + `, compared on every fixture, 100 mutations of each, and each
status and spec field replaced alone by other types, under every engine profile). The AnalysisRun's why
of a verdict (issue 59), added since, reads the measurements, which its previous script never read: there
the verdict must be the previous one's on every object, and the message too once the measurements are
taken away.

Two choices leave our AnalysisRun and Experiment above the built-ins in v2.x–v3.5 (the per-kind table of
v2.14 above), and both are deliberate:

* The **per-metric progress** of a running AnalysisRun is in its parsed path. It is what someone looking at
  the resource tree wants from a run in flight, and a running run with measurements is the common case;
  moving it into a chunk of its own was measured and made that case dearer (each chunk costs its fixed
  compile). The built-in says only ` + "`Analysis run is running`" + `.
* The **verdict messages** (which metric failed, with the assessment rebuilt when the controller wrote none;
  which analysis an Experiment failed) are the point of these scripts, and the built-ins, whose whole
  AnalysisRun script is a dozen lines, have none of them. A failed run or experiment is rare (1 % of the
  mix each), and is evaluated again only when it changes.

The bounds of each VM ("The least any script can cost") price the first choice: the bound of a running
AnalysisRun is the least code that gives its per-metric progress, and it is to be read against the built-in's
whole script.

In v3.6, which compiles once, these choices cost only their run: see its per-kind table.

The CLI's own cost (` + "`health -f`" + ` in bulk, ` + "`inspect`" + `, ` + "`hooks`" + `) is in [the CLI in bulk](performance-cli.md).
`
