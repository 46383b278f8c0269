// Record a job run as it starts.
CREATE (r:JobRun:Bookkeeping)
SET r = $props
