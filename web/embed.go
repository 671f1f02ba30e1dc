// Package web holds the dashboard's assets: plain HTML, CSS and
// JavaScript modules, embedded in the binary so the service serves them
// with no CDN and no Node toolchain at build or run time. The http package
// serves them at / and /assets/; this package only holds them.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Assets returns the dashboard's files, rooted at the static folder:
// index.html, login.html, and the stylesheet and modules under assets/.
func Assets() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		// fs.Sub fails only on an invalid path, and "static" is valid.
		panic("web: " + err.Error())
	}
	return sub
}
