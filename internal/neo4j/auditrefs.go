package neo4j

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// AuditRefsMigration names the Migration node recorded once every audit
// entry written before audit references has them (and no longer names
// other records in its text), and every supersede successor's provenance
// no longer names the record it replaced.
const AuditRefsMigration = "audit_refs"

// auditRefsBatch is how many entries (or records) one transaction of the
// migration reads.
const auditRefsBatch = 1000

// AuditRefsBackfill reports what the last Migrate did for audit references:
// entries and records rewritten, and those skipped because they are sealed
// under a key this server lacks (or do not open). Skipped ones keep their
// old text, readable by nobody without the key; the migration runs again at a
// start holding a key it has not run with.
func (db *DB) AuditRefsBackfill() (migrated, skipped int) {
	return db.refsMigrated, db.refsSkipped
}

// backfillAuditRefs moves the ids that entries written before audit
// references carry in text (rationale, removedEdges) into references, and
// drops the old record's id from supersede successors' provenance, in
// id-ordered batches of one transaction each. Sealed text is opened and
// sealed again in Go. Idempotent: an entry is marked migrated by its
// (possibly empty) refIds, and a provenance without the old id is left
// alone; replicas starting together write the same values.
func (db *DB) backfillAuditRefs(ctx context.Context) error {
	db.refsMigrated, db.refsSkipped = 0, 0
	// Entries sealed under a key this server lacks are skipped; the
	// migration is then recorded with the keys it ran with and runs again
	// only at a start holding a key it has not tried (migrationDue).
	due, err := db.migrationDue(ctx, AuditRefsMigration)
	if err != nil || !due {
		return err
	}
	if err := db.migrateAuditRefs(ctx, nil); err != nil {
		return err
	}
	return db.finishMigration(ctx, AuditRefsMigration, db.refsSkipped)
}

// migrateAuditRefs is the migration's pass over the entries and records
// of scopes (nil: all).
func (db *DB) migrateAuditRefs(ctx context.Context, scopes []string) error {
	if err := inBatches(auditRefsBatch, func(after string) (int, string, error) {
		return db.auditRefsBatch(ctx, scopes, after)
	}); err != nil {
		return err
	}
	return inBatches(auditRefsBatch, func(after string) (int, string, error) {
		return db.successorProvenanceBatch(ctx, scopes, after)
	})
}

// legacyRemovedEdge parses TYPE->id or TYPE<-id.
func legacyRemovedEdge(e string) (membrane.AuditRef, bool) {
	for _, sep := range []string{"->", "<-"} {
		if typ, id, ok := strings.Cut(e, sep); ok && typ != "" && id != "" {
			return membrane.EdgeRef(typ, sep == "->", id, membrane.UnknownLevel, ""), true
		}
	}
	return membrane.AuditRef{}, false
}

// auditRefsBatch migrates the candidate entries after id after in one
// write transaction: it returns how many it read and the last id.
func (db *DB) auditRefsBatch(ctx context.Context, scopes []string, after string) (int, string, error) {
	type result struct {
		n             int
		last          string
		done, skipped int
	}
	r, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (result, error) {
		rows, err := collect(ctx, tx, cypher.Must("audit_refs_batch"), map[string]any{
			"after": after, "scopes": scopesOrNil(scopes), "limit": int64(auditRefsBatch), "sealed": "mbx1:", "prefixes": membrane.LegacyRationalePrefixes,
		})
		if err != nil || len(rows) == 0 {
			return result{}, err
		}
		res := result{n: len(rows)}
		type entry struct {
			id, rationale string
			sealed        bool
			refs          []membrane.AuditRef
			textIDs       []string // the ids the rationale named
		}
		var entries []entry
		var ids []string
		for _, row := range rows {
			p, _ := row.Values[0].(map[string]any)
			e := entry{id: str(p["id"]), rationale: str(p["rationale"])}
			res.last = e.id
			if membrane.IsSealed(e.rationale) {
				plain, err := db.sealer.Open(e.rationale, e.id+"/rationale")
				if err != nil {
					res.skipped++
					continue
				}
				e.rationale, e.sealed = string(plain), true
			}
			words, refs, _ := membrane.LegacyRationale(membrane.AuditAction(str(p["action"])), e.rationale)
			e.rationale = words
			for _, ref := range refs {
				e.textIDs = append(e.textIDs, ref.RecordID)
			}
			for _, s := range strs(p["removedEdges"]) {
				if ref, ok := legacyRemovedEdge(s); ok {
					refs = append(refs, ref)
				}
			}
			e.refs = refs
			for _, ref := range refs {
				ids = append(ids, ref.RecordID)
			}
			entries = append(entries, e)
		}
		slices.Sort(ids)
		levels := map[string][2]any{}
		if ids = slices.Compact(ids); len(ids) > 0 {
			lrows, err := collect(ctx, tx, cypher.Must("audit_refs_levels"), map[string]any{"ids": ids})
			if err != nil {
				return result{}, err
			}
			for _, l := range lrows {
				levels[str(l.Values[0])] = [2]any{l.Values[1], l.Values[2]}
			}
		}
		set := make([]map[string]any, 0, len(entries))
		for _, e := range entries {
			e.rationale = membrane.SettleLegacy(e.rationale, e.textIDs, func(id string) bool { _, ok := levels[id]; return ok })
			a := &membrane.AuditEntry{ID: e.id, Related: e.refs}
			for i := range a.Related {
				// A record found nowhere keeps UnknownLevel: shown to nobody.
				if l, ok := levels[a.Related[i].RecordID]; ok && l[0] != nil {
					a.Related[i].Level, a.Related[i].Scope = int(integer(l[0])), str(l[1])
				} else {
					a.Related[i].Level = membrane.UnknownLevel
				}
			}
			p, err := plainAuditProps(a)
			if err != nil {
				return result{}, err
			}
			props := map[string]any{"rationale": e.rationale}
			for _, k := range []string{"refIds", "refRoles", "refPredicates", "refLevels", "refScopes"} {
				props[k] = p[k]
			}
			if e.sealed && e.rationale != "" {
				if props["rationale"], err = db.sealer.Seal([]byte(e.rationale), e.id+"/rationale"); err != nil {
					return result{}, err
				}
			}
			set = append(set, map[string]any{"id": e.id, "props": props})
		}
		if len(set) > 0 {
			if _, err := single(ctx, tx, cypher.Must("audit_refs_set"), map[string]any{"rows": set}); err != nil {
				return result{}, err
			}
		}
		res.done = len(set)
		return res, nil
	})
	if err != nil {
		return 0, "", fmt.Errorf("audit references after %q: %w", after, err)
	}
	db.refsMigrated += r.done
	db.refsSkipped += r.skipped
	return r.n, r.last, nil
}

// successorProvenanceBatch drops, from the provenance of the records after
// id after that supersede others, the sources a supersede added before
// audit references (kind event, ref the old record's id).
func (db *DB) successorProvenanceBatch(ctx context.Context, scopes []string, after string) (int, string, error) {
	type result struct {
		n             int
		last          string
		done, skipped int
	}
	r, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (result, error) {
		rows, err := collect(ctx, tx, cypher.Must("supersede_provenance_batch"), map[string]any{"after": after, "scopes": scopesOrNil(scopes), "limit": int64(auditRefsBatch)})
		if err != nil || len(rows) == 0 {
			return result{}, err
		}
		res := result{n: len(rows)}
		var set []map[string]any
		for _, row := range rows {
			id, stored, olds := str(row.Values[0]), str(row.Values[1]), strs(row.Values[2])
			res.last = id
			text, sealed := stored, membrane.IsSealed(stored)
			if sealed {
				plain, err := db.sealer.Open(stored, id+"/provenanceSources")
				if err != nil {
					res.skipped++
					continue
				}
				text = string(plain)
			}
			var sources []membrane.ProvenanceSource
			if text == "" || json.Unmarshal([]byte(text), &sources) != nil {
				continue
			}
			kept := slices.DeleteFunc(slices.Clone(sources), func(s membrane.ProvenanceSource) bool {
				return s.Kind == membrane.ProvenanceEvent && slices.Contains(olds, s.Ref)
			})
			if len(kept) == len(sources) {
				continue
			}
			b, err := json.Marshal(kept)
			if err != nil {
				return result{}, err
			}
			out := string(b)
			if sealed {
				if out, err = db.sealer.Seal(b, id+"/provenanceSources"); err != nil {
					return result{}, err
				}
			}
			set = append(set, map[string]any{"id": id, "sources": out})
		}
		if len(set) > 0 {
			if _, err := single(ctx, tx, cypher.Must("supersede_provenance_set"), map[string]any{"rows": set}); err != nil {
				return result{}, err
			}
		}
		res.done = len(set)
		return res, nil
	})
	if err != nil {
		return 0, "", fmt.Errorf("successor provenance after %q: %w", after, err)
	}
	db.refsMigrated += r.done
	db.refsSkipped += r.skipped
	return r.n, r.last, nil
}

// scopesOrNil is the $scopes parameter of a pass over scopes, nil meaning
// every scope: the driver sends a nil slice as an empty list, which
// `$scopes IS NULL OR m.scope IN $scopes` reads as no scope at all.
func scopesOrNil(scopes []string) any {
	if scopes == nil {
		return nil
	}
	return scopes
}
