// Invariant: no half-written record. Every record of the scope has the
// properties every write sets, the label of its type, and the audit entry
// of its creation (written in the same transaction). baseSalience is not
// required: records written before it existed lack it, and reads fall back
// to salience. Returns one row per violation; none when the invariant holds.
WITH {episodic: 'Episodic', working: 'Working', semantic: 'Semantic', competence: 'Competence',
      plan_graph: 'PlanGraph', entity: 'Entity'} AS labelOf
MATCH (m:Memory {scope: $scope})
WITH m, labelOf[m.type] AS label,
     [k IN ['id', 'type', 'status', 'sensitivity', 'sensitivityLevel', 'confidence', 'salience',
            'createdAt', 'updatedAt', 'lastReinforcedAt', 'version', 'payload', 'name',
            'provenanceSources', 'decayCurve']
      WHERE m[k] IS NULL] AS missing
WITH m, label, missing,
     EXISTS { MATCH (m)-[:HAS_AUDIT]->(:AuditEntry {action: 'create'}) } AS created
WHERE size(missing) > 0 OR label IS NULL OR NOT label IN labels(m) OR NOT created
   OR NOT m.status IN ['active', 'contested', 'retracted', 'superseded']
RETURN 'record ' + coalesce(m.id, elementId(m)) + ' (' + coalesce(m.type, '?') + ', ' + coalesce(m.status, '?') +
       '): missing properties [' + reduce(s = '', k IN missing | s + ' ' + k) + ' ], label ok: ' +
       toString(label IN labels(m)) + ', create audit: ' + toString(created) AS violation
LIMIT 20
