package http

import (
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// LimitHeavyBodies exposes limitHeavyBodies with HeavySlots slots and the
// given wait, answering refusals as /graphql does.
func LimitHeavyBodies(wait time.Duration, next http.Handler) http.Handler {
	return limitHeavyBodies(newPrincipalSlots(HeavySlots, wait), graphQLRefusal, next)
}

// CostlyOperations exposes costlyOperations with n slots per principal and
// the given wait.
func CostlyOperations(n int, wait time.Duration) graphql.ResponseMiddleware {
	return costlyOperations(newPrincipalSlots(n, wait))
}
