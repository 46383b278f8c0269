// Record a job run as it starts.
CREATE (r:JobRun)
SET r = $props
