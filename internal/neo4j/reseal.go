package neo4j

import (
	"context"
	"fmt"
	"maps"

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
	var err error
	res.Records, res.SkippedRecords, err = db.resealBatches(ctx, "sealed_records", "reseal_records",
		map[string]any{"prefix": prefix, "keyId": keyID},
		func(props map[string]any) (map[string]any, bool, error) {
			r, err := db.recordFromProps(props)
			if err != nil {
				return nil, false, nil
			}
			p, err := db.recordProps(r)
			if err != nil {
				return nil, false, err
			}
			return map[string]any{
				"payload": p["payload"], "provenanceSources": p["provenanceSources"], "contestEvidence": p["contestEvidence"],
				// The blind terms move to the active key too.
				"blindTerms": p["blindTerms"], "blindKeyId": p["blindKeyId"], "blindTermsVersion": p["blindTermsVersion"],
				// And the keyed lookup digests (null removes what the
				// record has none of).
				"factKey": p["factKey"], "skillKey": p["skillKey"], "blindNames": p["blindNames"], "digestKeyId": p["digestKeyId"]}, true, nil
		})
	if err != nil {
		return res, fmt.Errorf("reseal records: %w", err)
	}
	res.Audits, res.SkippedAudits, err = db.resealBatches(ctx, "sealed_audits", "reseal_audits",
		map[string]any{"prefix": prefix},
		func(props map[string]any) (map[string]any, bool, error) {
			a, err := db.auditFromProps(props)
			if err != nil {
				return nil, false, nil
			}
			// Only sensitive records' entries are sealed, so resealing
			// uses the threshold's own level.
			p, err := db.auditProps(a, membrane.SensitivityHyper)
			if err != nil {
				return nil, false, err
			}
			return map[string]any{"rationale": p["rationale"], "previous": p["previous"], "actorDetail": p["actorDetail"]}, true, nil
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

// resealBatches rewrites what the statement find returns (the properties
// of the nodes sealed under the retired key, by id from $after, at most
// $limit of them) in batches of one transaction each: seal gives a node's
// properties sealed with the active key, or false when they do not open
// (the node is skipped and counted), and the statement store writes a
// batch's rows. It returns how many nodes it rewrote and skipped.
func (db *DB) resealBatches(ctx context.Context, find, store string, params map[string]any,
	seal func(props map[string]any) (map[string]any, bool, error)) (done, skipped int, err error) {
	const batch = 500
	// One batch: how many rows it read, the last id (the next batch
	// starts after it), how many it rewrote and skipped.
	type step struct {
		n, done, skipped int
		last             string
	}
	err = inBatches(batch, func(after string) (int, string, error) {
		st, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (step, error) {
			var st step
			p := maps.Clone(params)
			p["after"], p["limit"] = after, int64(batch)
			rows, err := collect(ctx, tx, cypher.Must(find), p)
			if err != nil || len(rows) == 0 {
				return st, err
			}
			st.n = len(rows)
			out := make([]map[string]any, 0, len(rows))
			for _, row := range rows {
				props, _ := row.Values[0].(map[string]any)
				st.last = str(props["id"])
				sealed, ok, err := seal(props)
				if err != nil {
					return st, err
				}
				if !ok {
					st.skipped++
					continue
				}
				out = append(out, map[string]any{"id": st.last, "props": sealed})
			}
			st.done = len(out)
			if len(out) == 0 {
				return st, nil
			}
			_, err = single(ctx, tx, cypher.Must(store), map[string]any{"rows": out})
			return st, err
		})
		if err == nil {
			done += st.done
			skipped += st.skipped
		}
		return st.n, st.last, err
	})
	return done, skipped, err
}
