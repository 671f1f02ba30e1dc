package main

import (
	"os"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestNewBrowser_LeavesNothingInHomeOrTMPDIR: the headless Chromium the
// dashboard tests drive writes its profile, crash reports, caches and
// scratch files under the test's temp dir — nothing in the HOME or the
// TMPDIR of the test process (no ~/.config/chromium after a test run).
func TestNewBrowser_LeavesNothingInHomeOrTMPDIR(t *testing.T) {
	chromiumPath(t)
	home := t.TempDir()
	// A short TMPDIR: Chromium's singleton socket goes there.
	tmp, err := os.MkdirTemp("", "b")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("TMPDIR", tmp)
	t.Run("browse", func(t *testing.T) {
		ctx := newBrowser(t, 800, 600)
		if _, err := chromedp.Run(ctx, chromedp.Navigate("data:text/html,<p>hi</p>")); err != nil {
			t.Fatal(err)
		}
	})
	for _, dir := range []string{home, tmp} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			t.Errorf("Chromium left %s in %s", e.Name(), dir)
		}
	}
}
