package http

import (
	"net/http"

	"github.com/99designs/gqlgen/graphql/playground"
)

// The GraphiQL page's scripts and styles, below assetsPrefix (package web,
// vendor/README.md): the versions gqlgen's page is written for.
const (
	graphiqlJS  = "vendor/graphiql-4.1.2/graphiql.min.js"
	graphiqlCSS = "vendor/graphiql-4.1.2/graphiql.min.css"
	reactJS     = "vendor/react-18.2.0/react.production.min.js"
	reactDOMJS  = "vendor/react-dom-18.2.0/react-dom.production.min.js"
)

// graphiqlAssetDirs are the asset folders the GraphiQL page loads from.
var graphiqlAssetDirs = pageAssetDirs(graphiqlJS, graphiqlCSS, reactJS, reactDOMJS)

// graphiqlPage is gqlgen's GraphiQL page loading everything from the
// server's own /assets/ instead of a CDN, so that it works without
// internet access. Its state stays out of the URL (gqlgen's option would
// put the headers pane, which holds the API key, into the address bar
// and the browser's history).
func graphiqlPage(assets *assetServer) http.Handler {
	return playground.Handler("Membrane", "/graphql",
		playground.WithGraphiqlVersion(
			assetsPrefix+graphiqlJS, assetsPrefix+graphiqlCSS,
			assets.integrity(graphiqlJS), assets.integrity(graphiqlCSS)),
		playground.WithGraphiqlReactVersion(
			assetsPrefix+reactJS, assetsPrefix+reactDOMJS,
			assets.integrity(reactJS), assets.integrity(reactDOMJS)),
	)
}
