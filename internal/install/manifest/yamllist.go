package manifest

import (
	"bytes"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"
)

// A List as `kubectl get -o yaml` prints it is, like its JSON form, one document of tens of megabytes:
//
//	apiVersion: v1
//	items:
//	- apiVersion: argoproj.io/v1alpha1
//	  kind: Rollout
//	  ...
//	kind: List
//	metadata: ...
//
// splitYAMLList cuts it into its items along the lines that start in the first column, so that each item
// decodes on its own. It only cuts what it can read for certain: top-level keys that are plain words, one
// block "items:" whose entries start with "- " in the first column, nothing else in the first column
// inside it (no comment, no document marker, no directive), and the keys before and after the items
// decoding on their own. goyaml lets a quoted scalar or a flow collection go on in the first column, so a
// cut can fall inside one; the piece that opens it then does not decode, nor does an alias to an anchor in
// another piece, and the consumers decode the document whole instead (Unit.Decode reports ErrSplit).
func splitYAMLList(b []byte) (items [][]byte, ok bool) {
	var before, after bytes.Buffer
	header := &before
	inItems, seen := false, false
	itemStart := -1
	end := func(at int) {
		if itemStart >= 0 {
			items = append(items, b[itemStart:at])
			itemStart = -1
		}
	}
	for pos := 0; pos < len(b); {
		n := bytes.IndexByte(b[pos:], '\n') + 1
		if n == 0 {
			n = len(b) - pos
		}
		line := b[pos : pos+n]
		switch c := line[0]; {
		case len(bytes.TrimSpace(line)) == 0 || c == ' ':
			// A blank or indented line belongs to what precedes it.
			if inItems && itemStart < 0 {
				return nil, false
			}
			if !inItems {
				header.Write(line)
			}
		case c == '-':
			if !inItems || !(len(bytes.TrimRight(line, "\r\n")) == 1 || line[1] == ' ') {
				return nil, false
			}
			end(pos)
			itemStart = pos
		case c == '#' && !inItems:
			header.Write(line)
		default:
			key, rest, isKey := topLevelKey(line)
			if !isKey {
				return nil, false
			}
			end(pos)
			inItems = false
			if key == "items" {
				if seen || rest != "" {
					return nil, false
				}
				seen, inItems, header = true, true, &after
				break
			}
			header.Write(line)
		}
		pos += n
	}
	end(len(b))
	if !seen || len(items) == 0 {
		return nil, false
	}
	// Each part of the header on its own: a scalar that one of them leaves open would have swallowed the
	// items.
	h := map[string]any{}
	for _, part := range [][]byte{before.Bytes(), after.Bytes()} {
		var m map[string]any
		if err := sigsyaml.Unmarshal(part, &m); err != nil {
			return nil, false
		}
		for k, v := range m {
			if _, dup := h[k]; dup {
				return nil, false
			}
			h[k] = v
		}
	}
	if kind, _ := h["kind"].(string); !strings.HasSuffix(kind, "List") {
		return nil, false
	}
	return items, true
}

// topLevelKey reads "key:" or "key: value" with a plain key of letters, digits and -_./; rest is the
// value's text without a trailing comment-free check (empty for a block value).
func topLevelKey(line []byte) (key, rest string, ok bool) {
	i := 0
	for i < len(line) {
		c := line[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.' || c == '/') {
			i++
			continue
		}
		break
	}
	if i == 0 || i == len(line) || line[i] != ':' {
		return "", "", false
	}
	after := line[i+1:]
	if len(after) > 0 && after[0] != ' ' && after[0] != '\n' && after[0] != '\r' {
		return "", "", false
	}
	return string(line[:i]), strings.TrimSpace(string(after)), true
}

// decodeYAMLItem decodes one "- ..." entry cut by splitYAMLList: on its own it is a sequence of one.
func decodeYAMLItem(item []byte) (any, bool) {
	var seq []any
	if err := sigsyaml.Unmarshal(item, &seq); err != nil || len(seq) != 1 {
		return nil, false
	}
	return seq[0], true
}
