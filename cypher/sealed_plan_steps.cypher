// Plan steps of sealed plans, written before sealed plans stopped getting
// them (their ops and parameters are the plan's text, in clear). Migrate
// runs it once and then records the Migration sealed_plan_steps; idempotent.
MATCH (m:Memory)-[:HAS_STEP]->(s:PlanStep)
WHERE m.encrypted = true
CALL (s) {
  DETACH DELETE s
} IN TRANSACTIONS OF 10000 ROWS
