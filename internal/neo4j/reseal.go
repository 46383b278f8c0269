package neo4j

import (
	"context"
	"fmt"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Reseal rewrites every value sealed under keyID with the active key (and
// the blind terms computed under keyID with the active key's), in
// batches of one transaction each, and returns how many records and audit
// entries it rewrote. Run it after rotating keys; once it reports nothing
// left, keyID can be removed from the configuration. It returns once the
// eventually consistent search indexes hold what it rewrote: a server
// started after it with the new key alone finds every sealed entity by its
// blind names at once (before, a capture right after a reseal could miss
// one and create it again).
func (db *DB) Reseal(ctx context.Context, keyID string) (records, audits int, err error) {
	if keyID == db.sealer.Active() {
		return 0, 0, membrane.Errorf(membrane.EINVALID, "key %q is the active key; reseal retires an older key", keyID)
	}
	prefix := "mbx1:" + keyID + ":"
	const batch = 500
	for {
		n, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (int, error) {
			rows, err := collect(ctx, tx, cypher.Must("sealed_records"), map[string]any{"prefix": prefix, "keyId": keyID, "limit": int64(batch)})
			if err != nil || len(rows) == 0 {
				return 0, err
			}
			out := make([]map[string]any, len(rows))
			for i, row := range rows {
				props, _ := row.Values[0].(map[string]any)
				r, err := db.recordFromProps(props)
				if err != nil {
					return 0, err
				}
				p, err := db.recordProps(r)
				if err != nil {
					return 0, err
				}
				out[i] = map[string]any{"id": r.ID, "props": map[string]any{
					"payload": p["payload"], "provenanceSources": p["provenanceSources"], "contestEvidence": p["contestEvidence"],
					// The blind terms move to the active key too.
					"blindTerms": p["blindTerms"], "blindKeyId": p["blindKeyId"], "blindTermsVersion": p["blindTermsVersion"],
					// And the keyed lookup digests (null removes what the
					// record has none of).
					"factKey": p["factKey"], "skillKey": p["skillKey"], "blindNames": p["blindNames"], "digestKeyId": p["digestKeyId"]}}
			}
			_, err = single(ctx, tx, cypher.Must("reseal_records"), map[string]any{"rows": out})
			return len(out), err
		})
		if err != nil {
			return records, audits, fmt.Errorf("reseal records: %w", err)
		}
		if records += n; n < batch {
			break
		}
	}
	for {
		n, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (int, error) {
			rows, err := collect(ctx, tx, cypher.Must("sealed_audits"), map[string]any{"prefix": prefix, "limit": int64(batch)})
			if err != nil || len(rows) == 0 {
				return 0, err
			}
			out := make([]map[string]any, len(rows))
			for i, row := range rows {
				props, _ := row.Values[0].(map[string]any)
				a, err := db.auditFromProps(props)
				if err != nil {
					return 0, err
				}
				// Only sensitive records' entries are sealed, so resealing
				// uses the threshold's own level.
				p, err := db.auditProps(a, membrane.SensitivityHyper)
				if err != nil {
					return 0, err
				}
				out[i] = map[string]any{"id": a.ID, "props": map[string]any{
					"rationale": p["rationale"], "previous": p["previous"], "actorDetail": p["actorDetail"]}}
			}
			_, err = single(ctx, tx, cypher.Must("reseal_audits"), map[string]any{"rows": out})
			return len(out), err
		})
		if err != nil {
			return records, audits, fmt.Errorf("reseal audit entries: %w", err)
		}
		if audits += n; n < batch {
			break
		}
	}
	if records > 0 {
		if err := db.AwaitSearchIndexes(ctx); err != nil {
			return records, audits, err
		}
	}
	return records, audits, nil
}
