package http

import (
	"net/http"
	"time"
)

// LimitConcurrency exposes limitConcurrency with n slots per principal and
// the given wait, answering refusals as /graphql does, for the tests of
// the slots alone.
func LimitConcurrency(n int, wait time.Duration, longLived func(*http.Request) bool, next http.Handler) http.Handler {
	return limitConcurrency(newPrincipalSlots(n, wait), longLived, graphQLRefusal, next)
}
