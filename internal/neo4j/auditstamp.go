package neo4j

import (
	"context"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// restampAudits gives the audit entries of the records ids their record's
// current level and scope, in tx. Entries are gated on that copy, so a
// revision that raises a record (consolidation joining a HIGH episode to a
// LOW competence) or moves it must re-stamp them, or its earlier entries
// stay readable, with its id, by callers who no longer see it. Entries now
// at a sealed level get their free text sealed, as if written there.
func (db *DB) restampAudits(ctx context.Context, tx neo4j.ManagedTransaction, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := collect(ctx, tx, cypher.Must("audit_restamp"), map[string]any{"ids": ids})
	if err != nil {
		return err
	}
	return db.sealRestamped(ctx, tx, rows)
}

// sealRestamped seals the clear free text of re-stamped entries (rows of
// audit_restamp: properties, level) that are now at a sealed level. A
// server without a key cannot seal (nor write a record at a sealed level):
// the migration then only re-stamps, which is what gating needs.
func (db *DB) sealRestamped(ctx context.Context, tx neo4j.ManagedTransaction, rows []*neo4j.Record) error {
	if db.sealer.Active() == "" {
		return nil
	}
	var out []map[string]any
	for _, row := range rows {
		p, _ := row.Values[0].(map[string]any)
		if !db.sealer.RequiredAt(int(integer(row.Values[1]))) {
			continue
		}
		id, props := str(p["id"]), map[string]any{}
		for _, k := range []string{"rationale", "previous", "actorDetail"} {
			if s := str(p[k]); s != "" && !membrane.IsSealed(s) {
				sealed, err := db.sealer.Seal([]byte(s), id+"/"+k)
				if err != nil {
					return err
				}
				props[k] = sealed
			}
		}
		if _, ok := props["actorDetail"]; ok {
			// The caption named the detail in clear: no longer.
			props["caption"] = auditCaption(&membrane.AuditEntry{Action: membrane.AuditAction(str(p["action"])),
				Actor: str(p["actor"]), Timestamp: tm(p["at"])}, "")
		}
		if len(props) > 0 {
			out = append(out, map[string]any{"id": id, "props": props})
		}
	}
	if len(out) == 0 {
		return nil
	}
	_, err := single(ctx, tx, cypher.Must("reseal_audits"), map[string]any{"rows": out})
	return err
}
