package loop_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// module is this repository's module path.
const module = "github.com/the-loop-dev/the-loop"

// archDoc is the page whose tables the tests below hold the code to.
const archDoc = "docs/architecture.md"

// deps lists the packages pkgs depend on (go list -deps), test files left
// out.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps %v: %v", pkgs, err)
	}
	return strings.Fields(string(out))
}

// ourImports maps each of our packages (its room name: "loop" for the root,
// else its path below the module) to the rooms its non-test files import.
func ourImports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		room, _ := roomOf(f[0])
		var imps []string
		for _, imp := range f[1:] {
			if r, ours := roomOf(imp); ours {
				imps = append(imps, r)
			}
		}
		pkgs[room] = imps
	}
	return pkgs
}

// sortedKeys are m's keys, sorted (for messages in a stable order).
func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// roomOf is an import path's room name, and whether the path is ours.
func roomOf(path string) (string, bool) {
	if path == module {
		return "loop", true
	}
	rest, ok := strings.CutPrefix(path, module+"/")
	return rest, ok
}

// docRow is one row of a table in the architecture doc.
type docRow struct {
	rooms []string // the first cell's rooms ("loop" for the root)
	cell  string   // the second cell, as written
	line  string   // the whole row, for messages
}

var backticked = regexp.MustCompile("`([^`]+)`")

// names are the backticked names of a cell, "/" read as the root.
func names(cell string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
		n := m[1]
		if n == "/" {
			n = "loop"
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// docTable reads the table of the architecture doc whose header row starts
// with header.
func docTable(t *testing.T, header string) []docRow {
	t.Helper()
	data, err := os.ReadFile(archDoc)
	if err != nil {
		t.Fatal(err)
	}
	var rows []docRow
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if !in {
			in = strings.HasPrefix(line, header)
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 2 || strings.Trim(cells[0], " -") == "" {
			continue // the separator row
		}
		rows = append(rows, docRow{rooms: names(cells[0]), cell: strings.TrimSpace(cells[1]), line: line})
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no table headed %q", archDoc, header)
	}
	return rows
}

const (
	roomsHeader  = "| room | job |"
	importHeader = "| room | may import"
)

// TestDeps_EveryImportIsInItsRoomsRow: every import of one of our packages
// by another (test files left out) is one the importer's row of the doc's
// "may import" table lists. The root package is every room's to import;
// a row saying "any room" allows all.
func TestDeps_EveryImportIsInItsRoomsRow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	pkgs := ourImports(t)
	rows := map[string]docRow{}
	for _, r := range docTable(t, importHeader) {
		for _, room := range r.rooms {
			if _, dup := rows[room]; dup {
				t.Errorf("%s's may-import table lists %s twice", archDoc, room)
			}
			rows[room] = r
		}
		if strings.Contains(r.cell, "any room") {
			continue
		}
		for _, n := range names(r.cell) {
			if _, ok := pkgs[n]; !ok {
				t.Errorf("%s's may-import row %s names %s, which is no package of ours", archDoc, r.line, n)
			}
		}
	}
	for _, room := range sortedKeys(pkgs) {
		imps := pkgs[room]
		row, ok := rows[room]
		if !ok {
			t.Errorf("%s has no may-import row for %s (it imports %v)", archDoc, room, imps)
			continue
		}
		if strings.Contains(row.cell, "any room") {
			continue
		}
		allowed := names(row.cell)
		for _, imp := range imps {
			if imp != "loop" && !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s, which its row in %s does not list: %s", room, imp, archDoc, row.line)
			}
		}
	}
}

// TestDeps_TheRoomsTablesListEveryPackage: the doc's rooms table and its
// may-import table each list every package `go list ./...` prints, and no
// room that does not exist.
func TestDeps_TheRoomsTablesListEveryPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	pkgs := ourImports(t)
	for _, header := range []string{roomsHeader, importHeader} {
		listed := map[string]bool{}
		for _, r := range docTable(t, header) {
			for _, room := range r.rooms {
				listed[room] = true
				if _, ok := pkgs[room]; !ok {
					t.Errorf("%s's table %q lists %s, which is no package of ours", archDoc, header, room)
				}
			}
		}
		for _, room := range sortedKeys(pkgs) {
			if !listed[room] {
				t.Errorf("%s's table %q does not list the package %s", archDoc, header, room)
			}
		}
	}
}

// TestDeps_SurfacesReachNoStore: http and channels depend on the root
// package's interfaces, never on the store or bbolt (nor on lifecycle,
// which holds the store) — not even through another room.
func TestDeps_SurfacesReachNoStore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, d := range deps(t, "./http", "./channels/...") {
		for _, banned := range []string{module + "/store", module + "/lifecycle", "go.etcd.io/bbolt"} {
			if d == banned || strings.HasPrefix(d, banned+"/") {
				t.Errorf("./http or ./channels/... depends on %s", d)
			}
		}
	}
}

// TestDeps_SDKIsLight: the SDK links the standard library and the root
// package only — no echo, bbolt, looplab/fsm, YAML or JSON Schema library,
// slack-go or the MCP SDK.
func TestDeps_SDKIsLight(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	std := stdPackages(t)
	for _, d := range deps(t, "./sdk") {
		if std[d] || d == module || d == module+"/sdk" {
			continue
		}
		t.Errorf("./sdk depends on %s: the SDK may link only the standard library and the root package", d)
	}
}

// TestDeps_TheHookProgramIsLight: the hook program (decisions D37) links
// the standard library, the root, the SDK and internal/fileperm alone — none
// of the service's libraries (echo, the MCP SDK, slack-go, Prometheus),
// nor bbolt, looplab/fsm or YAML.
func TestDeps_TheHookProgramIsLight(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	std := stdPackages(t)
	allowed := []string{module, module + "/sdk", module + "/internal/fileperm", module + "/cmd/the-loop-hook"}
	for _, d := range deps(t, "./cmd/the-loop-hook") {
		if !std[d] && !slices.Contains(allowed, d) {
			t.Errorf("./cmd/the-loop-hook depends on %s: the hook program may link only the standard library, the root, sdk and internal/fileperm", d)
		}
	}
}

// TestDeps_TheCLILinksNoneOfTheService: the-loop as installed (built with
// -tags loop_omit_service) links none of the service's libraries — echo,
// the MCP SDK, slack-go, Prometheus, kin-openapi — nor the rooms that hold
// them; the service's program, the-loopd, the same package built without
// the tag, links them all (decisions D37).
func TestDeps_TheCLILinksNoneOfTheService(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	service := []string{"github.com/labstack/echo/v4", "github.com/modelcontextprotocol/go-sdk/mcp", "github.com/slack-go/slack",
		"github.com/prometheus/client_golang/prometheus", "github.com/getkin/kin-openapi/openapi3",
		module + "/http", module + "/channels", module + "/metrics", module + "/supervision", module + "/web"}
	cli := deps(t, "-tags", "loop_omit_service", "./cmd/the-loop")
	daemon := deps(t, "./cmd/the-loop")
	for _, p := range service {
		if slices.Contains(cli, p) {
			t.Errorf("the-loop (-tags loop_omit_service) links %s: the CLI hands the service's commands to the-loopd instead", p)
		}
	}
	for _, p := range []string{"github.com/labstack/echo/v4", "github.com/slack-go/slack", module + "/http", module + "/supervision"} {
		if !slices.Contains(daemon, p) {
			t.Errorf("the-loopd (./cmd/the-loop without the tag) does not link %s: it is the service", p)
		}
	}
}

// TestDeps_OnlyTheFleetRoomImportsEtcd: of our packages only fleet (and
// internal/etcdtest, the tests' embedded server) import go.etcd.io/etcd/
// — bbolt, go.etcd.io/bbolt, is not etcd — and neither the CLI as
// installed nor the hook program links any of it (decisions D36, D37).
func TestDeps_OnlyTheFleetRoomImportsEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const etcd = "go.etcd.io/etcd/"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	importers := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, etcd) {
				continue
			}
			if f[0] != module+"/fleet" && f[0] != module+"/internal/etcdtest" {
				t.Errorf("%s imports %s: only the fleet room may (decisions D36)", f[0], imp)
			}
			if f[0] == module+"/fleet" {
				importers++
			}
		}
	}
	if importers == 0 {
		t.Error("the fleet room imports nothing of go.etcd.io/etcd/: this test no longer checks what it says")
	}
	for _, prog := range [][]string{{"-tags", "loop_omit_service", "./cmd/the-loop"}, {"./cmd/the-loop-hook"}} {
		for _, d := range deps(t, prog...) {
			if strings.HasPrefix(d, etcd) {
				t.Errorf("%v links %s: only the service's program may link the etcd client (decisions D37)", prog, d)
			}
		}
	}
}

// stdPackages is the standard library's packages (go list std).
func stdPackages(t *testing.T) map[string]bool {
	t.Helper()
	std := map[string]bool{}
	out, err := exec.Command("go", "list", "std").Output()
	if err != nil {
		t.Fatalf("go list std: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		std[p] = true
	}
	return std
}
