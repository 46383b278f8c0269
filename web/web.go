// Package web holds the static assets the server serves under /assets/:
// third-party browser libraries vendored from the npm registry (vendor/,
// one folder per package and version; see vendor/README.md for their
// versions, licences and how to update them), and the lineage explorer's
// own page, script and stylesheet (explorer/: plain files, no build step;
// internal/http serves the page at /explorer/), embedded in the binary so
// that the pages work without internet access.
//
// The package sits at the module's top level because go:embed only reaches
// files in and below the directory of the package that embeds them, and
// these are not Go code of any layer: internal/http serves them. It holds
// no net/http code.
//
// Adding assets: put a folder beside vendor/ (e.g. explorer/ for a page's
// own scripts) and add it to the go:embed line below; it is then served at
// /assets/<folder>/....
package web

import "embed"

// FS is the embedded asset tree; paths are relative to this directory
// (e.g. "vendor/react-18.2.0/react.production.min.js").
//
//go:embed vendor explorer
var FS embed.FS
