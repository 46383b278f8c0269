package graph

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/membrane/membrane/internal/membrane"
)

// sseTransport is gqlgen's SSE transport with the request body checked
// first. gqlgen's own check prints an undecodable body with the standard
// logger, which would put record payloads in the logs; here such a request
// gets a coded 400 and nothing is logged.
type sseTransport struct{ transport.SSE }

func (t sseTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, membrane.EINVALID, "the request body is too large or could not be read")
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var params graphql.RawParams
	if err := dec.Decode(&params); err != nil {
		writeError(w, http.StatusBadRequest, membrane.EINVALID, "the request body is not a GraphQL request in JSON")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	t.SSE.Do(w, r, exec)
}
