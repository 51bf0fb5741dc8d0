// Package bench holds no code: its packages are the benchmark lab
// (README.md). This test keeps the tree a leaf.
package bench

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/fared/fared/"

// Nothing outside bench/ and cmd/farebench imports bench/..., tests
// included: the core's tests take their synthetic fabrics from
// internal/closgen and the lab's from interop and internal/kernwatch, so
// the benchmark tree can change without touching them (issue 26). Direct
// imports are enough: a package outside that imported one that imports
// bench would be caught as the importer.
//
// The imports are read from the files themselves, not from go list, so
// that go test's cache, which sees the files a test opens, reruns the
// test when any of them changes.
func TestNothingOutsideImportsBench(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" ||
				rel == "bench" || rel == "cmd/farebench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == module+"bench" || strings.HasPrefix(p, module+"bench/") {
				t.Errorf("%s imports %s", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read only %d Go files under %s", files, root)
	}
}
