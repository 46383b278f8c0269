package neo4j

import (
	"context"
	"fmt"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// ResealResult is what Reseal did.
type ResealResult struct {
	// Records and Audits were rewritten under the active key.
	Records, Audits int
	// SkippedRecords and SkippedAudits did not open under the retired key
	// (a value that fails authentication or does not decode): they stay
	// as they are, under it, unreadable as before.
	SkippedRecords, SkippedAudits int
}

// Reseal rewrites every value sealed under keyID with the active key (and
// the blind terms computed under keyID with the active key's), in
// batches of one transaction each, and reports how many records and audit
// entries it rewrote and how many it skipped. A record or audit entry that
// does not open is skipped and counted, not an error: one damaged value
// must not keep every other record under a key being retired. Run it
// after rotating keys; once it reports nothing rewritten, keyID can be
// removed from the configuration (what it skipped stays unreadable, as it
// was). It returns once the eventually consistent search indexes hold
// what it rewrote: a server started after it with the new key alone finds
// every sealed entity by its blind names at once (before, a capture right
// after a reseal could miss one and create it again).
func (db *DB) Reseal(ctx context.Context, keyID string) (ResealResult, error) {
	var res ResealResult
	if keyID == db.sealer.Active() {
		return res, membrane.Errorf(membrane.EINVALID, "key %q is the active key; reseal retires an older key", keyID)
	}
	prefix := "mbx1:" + keyID + ":"
	const batch = 500
	// One batch: how many rows it read, the last id (the next batch
	// starts after it), how many it rewrote and skipped.
	type step struct {
		n, done, skipped int
		last             string
	}
	err := inBatches(batch, func(after string) (int, string, error) {
		st, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (step, error) {
			var st step
			rows, err := collect(ctx, tx, cypher.Must("sealed_records"), map[string]any{"prefix": prefix, "keyId": keyID, "after": after, "limit": int64(batch)})
			if err != nil || len(rows) == 0 {
				return st, err
			}
			st.n = len(rows)
			out := make([]map[string]any, 0, len(rows))
			for _, row := range rows {
				props, _ := row.Values[0].(map[string]any)
				st.last = str(props["id"])
				r, err := db.recordFromProps(props)
				if err != nil {
					st.skipped++
					continue
				}
				p, err := db.recordProps(r)
				if err != nil {
					return st, err
				}
				out = append(out, map[string]any{"id": r.ID, "props": map[string]any{
					"payload": p["payload"], "provenanceSources": p["provenanceSources"], "contestEvidence": p["contestEvidence"],
					// The blind terms move to the active key too.
					"blindTerms": p["blindTerms"], "blindKeyId": p["blindKeyId"], "blindTermsVersion": p["blindTermsVersion"],
					// And the keyed lookup digests (null removes what the
					// record has none of).
					"factKey": p["factKey"], "skillKey": p["skillKey"], "blindNames": p["blindNames"], "digestKeyId": p["digestKeyId"]}})
			}
			st.done = len(out)
			if len(out) == 0 {
				return st, nil
			}
			_, err = single(ctx, tx, cypher.Must("reseal_records"), map[string]any{"rows": out})
			return st, err
		})
		if err == nil {
			res.Records += st.done
			res.SkippedRecords += st.skipped
		}
		return st.n, st.last, err
	})
	if err != nil {
		return res, fmt.Errorf("reseal records: %w", err)
	}
	err = inBatches(batch, func(after string) (int, string, error) {
		st, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (step, error) {
			var st step
			rows, err := collect(ctx, tx, cypher.Must("sealed_audits"), map[string]any{"prefix": prefix, "after": after, "limit": int64(batch)})
			if err != nil || len(rows) == 0 {
				return st, err
			}
			st.n = len(rows)
			out := make([]map[string]any, 0, len(rows))
			for _, row := range rows {
				props, _ := row.Values[0].(map[string]any)
				st.last = str(props["id"])
				a, err := db.auditFromProps(props)
				if err != nil {
					st.skipped++
					continue
				}
				// Only sensitive records' entries are sealed, so resealing
				// uses the threshold's own level.
				p, err := db.auditProps(a, membrane.SensitivityHyper)
				if err != nil {
					return st, err
				}
				out = append(out, map[string]any{"id": a.ID, "props": map[string]any{
					"rationale": p["rationale"], "previous": p["previous"], "actorDetail": p["actorDetail"]}})
			}
			st.done = len(out)
			if len(out) == 0 {
				return st, nil
			}
			_, err = single(ctx, tx, cypher.Must("reseal_audits"), map[string]any{"rows": out})
			return st, err
		})
		if err == nil {
			res.Audits += st.done
			res.SkippedAudits += st.skipped
		}
		return st.n, st.last, err
	})
	if err != nil {
		return res, fmt.Errorf("reseal audit entries: %w", err)
	}
	if res.Records > 0 {
		if err := db.AwaitSearchIndexes(ctx); err != nil {
			return res, err
		}
	}
	// The records moved to the active key's id: the stored count a start
	// reads (countUnreadable) must say so, or a server without the
	// retired key would report them unreadable.
	return res, db.countUnreadable(ctx, true)
}
