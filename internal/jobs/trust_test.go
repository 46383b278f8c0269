package jobs_test

import (
	"context"

	"github.com/membrane/membrane/internal/membrane"
)

// sysCtx is the context of the server's own work: these tests call the
// store directly, below the API's gating, with the system's trust.
func sysCtx() context.Context {
	return membrane.NewContextWithTrust(context.Background(), membrane.SystemTrust("test"))
}
