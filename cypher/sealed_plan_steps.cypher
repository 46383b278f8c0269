// Plan steps of sealed plans, written before sealed plans stopped getting
// them (their ops and parameters are the plan's text, in clear). Migrate
// runs it once and then records the Migration sealed_plan_steps; idempotent.
// $scopes narrows it to the plans of those scopes (null: all), so that a
// test re-runs it over its own records without touching the shared
// Migration node.
MATCH (m:Memory)-[:HAS_STEP]->(s:PlanStep)
WHERE m.encrypted = true AND ($scopes IS NULL OR m.scope IN $scopes)
CALL (s) {
  DETACH DELETE s
} IN TRANSACTIONS OF 10000 ROWS
