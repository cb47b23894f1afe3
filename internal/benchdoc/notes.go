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
worst-case objects of ` + "`internal/worstcase`" + `); golden files of each form are in ` + "`generator/testdata/forms/`" + `.

The CLI's own cost (` + "`health -f`" + ` in bulk, ` + "`inspect`" + `, ` + "`hooks`" + `) is in [the CLI in bulk](performance-cli.md).
`
