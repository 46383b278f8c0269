package neo4j_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
)

// sysCtx is the context of the server's own work: these tests call the
// store directly, below the API's gating, with the system's trust.
func sysCtx() context.Context {
	return membrane.NewContextWithTrust(context.Background(), membrane.SystemTrust("test"))
}

// The gate's parameters carry a trust as the statements read it: the
// ceiling as an integer, and the scopes as a list even when there are
// none (a null list would make every scope test null, not false).
func TestTrustParams(t *testing.T) {
	for _, tc := range []struct {
		name  string
		trust membrane.Trust
		want  map[string]any
	}{
		{"every scope", membrane.Trust{Ceiling: 4, All: true}, map[string]any{"ceiling": int64(4), "allScopes": true, "trustScopes": []string{}}},
		{"some scopes", membrane.Trust{Ceiling: 1, Scopes: []string{"a", "b"}}, map[string]any{"ceiling": int64(1), "allScopes": false, "trustScopes": []string{"a", "b"}}},
		{"no scope", membrane.Trust{}, map[string]any{"ceiling": int64(0), "allScopes": false, "trustScopes": []string{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := neo4j.TrustParams(tc.trust); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("TrustParams = %#v, want %#v", got, tc.want)
			}
		})
	}
}
