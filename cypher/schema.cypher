// Graph schema, applied idempotently at every start (and by membrane
// migrate). A change here raises SchemaVersion (internal/neo4j/schema.go).
// Records: one node per record, labelled Memory plus its type label.
CREATE CONSTRAINT memory_id IF NOT EXISTS FOR (m:Memory) REQUIRE m.id IS UNIQUE;
CREATE CONSTRAINT audit_entry_id IF NOT EXISTS FOR (a:AuditEntry) REQUIRE a.id IS UNIQUE;
// A deleted record leaves the tombstone of its id (deleteRecord, prune): an
// id is never used again, so a record's audit trail, found by recordId, is
// only ever its own. Creates check it by this index.
CREATE CONSTRAINT deleted_record_id IF NOT EXISTS FOR (t:DeletedRecordId) REQUIRE t.id IS UNIQUE;
// The schema version the database holds (schema_version_set).
CREATE CONSTRAINT membrane_schema_id IF NOT EXISTS FOR (s:MembraneSchema) REQUIRE s.id IS UNIQUE;
// The check value of each encryption key id (seal_key_checks), and the last
// count of sealed records by key id (sealed_count_set): bookkeeping.
CREATE CONSTRAINT seal_key_id IF NOT EXISTS FOR (k:SealKey) REQUIRE k.id IS UNIQUE;
CREATE CONSTRAINT sealed_count_name IF NOT EXISTS FOR (c:SealedCount) REQUIRE c.name IS UNIQUE;
// Every index below is read by a statement (TestIndexUse lists them with
// their plans): every write that sets an indexed property pays for it, so
// an index no statement reads is not created.
// Range indexes for keyset ordering (records pages walk createdAt,
// updatedAt, salience or confidence in order), the trust gate's level and
// scope, and status (duplicate facts).
CREATE INDEX memory_created_at IF NOT EXISTS FOR (m:Memory) ON (m.createdAt);
CREATE INDEX memory_updated_at IF NOT EXISTS FOR (m:Memory) ON (m.updatedAt);
CREATE INDEX memory_salience IF NOT EXISTS FOR (m:Memory) ON (m.salience);
CREATE INDEX memory_confidence IF NOT EXISTS FOR (m:Memory) ON (m.confidence);
CREATE INDEX memory_scope IF NOT EXISTS FOR (m:Memory) ON (m.scope);
// A scope's records newest first (records_page_scoped: a dashboard's
// default listing walks it in order and stops at the page). The id orders
// records created at the same instant (every record of one ingestBatch),
// so that the index gives the page's whole order: without it, a page read
// every record of the instant (1,000 of a batch) to sort them. Scope,
// creation time and id never change, so it costs a write only when a
// record is created or deleted.
CREATE INDEX memory_scope_created_at IF NOT EXISTS FOR (m:Memory) ON (m.scope, m.createdAt, m.id);
CREATE INDEX memory_sensitivity_level IF NOT EXISTS FOR (m:Memory) ON (m.sensitivityLevel);
CREATE INDEX memory_status IF NOT EXISTS FOR (m:Memory) ON (m.status);
// Audit entries are found by record and time (audit_for_records seeks
// audit_record_at; audit_page walks audit_at in order).
CREATE INDEX audit_record_at IF NOT EXISTS FOR (a:AuditEntry) ON (a.recordId, a.at);
CREATE INDEX audit_at IF NOT EXISTS FOR (a:AuditEntry) ON (a.at);
// Session chains (NEXT, session_link): an episode's predecessor and
// successor in its session are found by scope, session and time, so a
// session is one index range however large the store. SessionLock buckets
// serialise transactions adding to the same session.
CREATE INDEX memory_session IF NOT EXISTS FOR (m:Memory) ON (m.scope, m.sessionKey, m.sessionAt);
CREATE CONSTRAINT session_lock_bucket IF NOT EXISTS FOR (l:SessionLock) REQUIRE l.bucket IS UNIQUE;
// Full-text search over each record's search terms (retrieval): the terms
// membrane.AnalyzeText made of its payload (stemmed words, identifiers split
// and kept whole), joined by spaces, so the index only splits on whitespace
// and queries are analysed the same way in Go. It is eventually consistent:
// Lucene is updated just after commit instead of inside it, which keeps
// concurrent writes from queueing on the index (it raised supersede
// throughput with 8 clients by half; docs/BENCHMARKS.md). A search may miss
// a record for the moment after its write.
CREATE FULLTEXT INDEX memory_terms IF NOT EXISTS FOR (m:Memory) ON EACH [m.searchTerms]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace', `fulltext.eventually_consistent`: true}};
// Blind index of sealed records (docs/security.md): blindTerms holds the
// keyed HMAC tokens of the record's analysed terms, space-separated hex, so
// the whitespace analyzer keeps each token whole. Only sealed records have
// the property. Eventually consistent, like memory_terms.
CREATE FULLTEXT INDEX memory_blind IF NOT EXISTS FOR (m:Memory) ON EACH [m.blindTerms]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace', `fulltext.eventually_consistent`: true}};
// Entity resolution (captureMemory): entities by normalised name or alias
// (Entity.terms, a list) within a scope. The keyword analyzer keeps each
// name and the scope whole, so a query matches them exactly. Only Entity
// nodes are indexed. It is eventually consistent: a synchronous index made
// every capture that creates an entity commit a Lucene update (8 ms instead
// of 2, docs/BENCHMARKS.md); the entities a capture created
// recently are found through its lock buckets instead (entity_lock).
CREATE FULLTEXT INDEX entity_name_terms IF NOT EXISTS FOR (e:Entity) ON EACH [e.terms, e.scope]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword', `fulltext.eventually_consistent`: true}};
// Sealed entities have no plaintext terms: they are resolved by blindNames,
// the keyed digests of their scope and names (membrane.EntityNameDigests,
// docs/security.md), matched whole by the keyword analyzer. Eventually
// consistent like entity_name_terms, and made up for the same way.
CREATE FULLTEXT INDEX entity_blind_names IF NOT EXISTS FOR (e:Entity) ON EACH [e.blindNames]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword', `fulltext.eventually_consistent`: true}};
// Lock buckets that serialise captures creating same-named entities.
CREATE CONSTRAINT entity_lock_bucket IF NOT EXISTS FOR (l:EntityLock) REQUIRE l.bucket IS UNIQUE;
// Idempotency keys of mutations; prune forgets them by age
// (idempotency_expire).
CREATE CONSTRAINT idempotency_key IF NOT EXISTS FOR (k:IdempotencyKey) REQUIRE k.key IS UNIQUE;
CREATE INDEX idempotency_created_at IF NOT EXISTS FOR (k:IdempotencyKey) ON (k.createdAt);
// Maintenance jobs: one lease per job (and scope restriction), one node per run.
CREATE CONSTRAINT job_lease_key IF NOT EXISTS FOR (l:JobLease) REQUIRE l.key IS UNIQUE;
CREATE CONSTRAINT job_run_id IF NOT EXISTS FOR (r:JobRun) REQUIRE r.id IS UNIQUE;
// Plan graphs as subgraphs: one node per plan step.
CREATE CONSTRAINT plan_step_id IF NOT EXISTS FOR (s:PlanStep) REQUIRE s.id IS UNIQUE;
// Consolidation finds facts by their key digest (scope, subject, predicate,
// object: internal/membrane.FactKey) and competences by skill name.
CREATE INDEX semantic_fact_key IF NOT EXISTS FOR (m:Semantic) ON (m.factKey);
CREATE INDEX competence_skill_key IF NOT EXISTS FOR (m:Competence) ON (m.skillKey);
// Change feed (subscriptions): every audit entry is created with the label
// Unsequenced; after it commits, the sequencer (event_sequence) gives it
// the next number of the one AuditSequence counter, in commit order, and
// removes the label. Subscribers read entries by seq.
CREATE CONSTRAINT audit_sequence_id IF NOT EXISTS FOR (s:AuditSequence) REQUIRE s.id IS UNIQUE;
CREATE INDEX audit_seq IF NOT EXISTS FOR (a:AuditEntry) ON (a.seq);
