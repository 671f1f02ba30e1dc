package web

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// TestAssets_HoldThePagesAndNoInlineScript: the files the service serves are
// there, and no page carries an inline script or handler (the service's
// Content-Security-Policy allows script-src 'self' only, so one would not
// run), nor loads anything from another origin.
func TestAssets_HoldThePagesAndNoInlineScript(t *testing.T) {
	fsys := Assets()
	for _, name := range []string{"index.html", "login.html", "assets/app.css", "assets/app.js", "assets/live.js", "assets/api.js", "assets/dom.js", "assets/login.js", "assets/approvals.js"} {
		if _, err := fs.Stat(fsys, name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	inline := regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]|\son[a-z]+\s*=|javascript:`)
	remote := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`)
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".html") {
			if m := inline.Find(data); m != nil {
				t.Errorf("%s has inline script %q", p, m)
			}
			if m := remote.Find(data); m != nil {
				t.Errorf("%s loads from another origin: %q", p, m)
			}
		}
		if strings.HasSuffix(p, ".js") && regexp.MustCompile(`\binnerHTML\b|\beval\(|new Function\(`).Match(data) {
			t.Errorf("%s uses innerHTML, eval or new Function", p)
		}
		// No cookie carries authority: the scripts neither
		// read nor send one, and the stream is read with fetch, which
		// carries the secret (EventSource can send cookies only).
		if strings.HasSuffix(p, ".js") && regexp.MustCompile(`\bnew EventSource\b|document\.cookie|credentials:\s*'(include|same-origin)'`).Match(data) {
			t.Errorf("%s uses EventSource, document.cookie or sends cookies", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAssets_TheCheckCanFail: the inline-script pattern above finds one.
func TestAssets_TheCheckCanFail(t *testing.T) {
	inline := regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]|\son[a-z]+\s*=|javascript:`)
	for _, page := range []string{`<script>alert(1)</script>`, `<button onclick="x()">`, `<a href="javascript:x()">`} {
		if !inline.MatchString(page) {
			t.Errorf("not caught: %s", page)
		}
	}
	if inline.MatchString(`<script type="module" src="/assets/app.js"></script>`) {
		t.Error("a module script by src is not inline")
	}
}
