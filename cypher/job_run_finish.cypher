// Record how a job run ended.
MATCH (r:JobRun {id: $id})
SET r += $props
