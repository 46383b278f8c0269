// Forget the job runs that finished before $cutoff (the prune job, with
// jobs.run_retention), so that the runs a dashboard pages through and the
// abandoned-run check at each lease do not grow for ever. A run still
// going (no finishedAt) is kept. No index: the prune job's one label scan
// an hour reads only the runs kept, a few thousand at the default
// retention. In batches of $batch runs per transaction.
MATCH (r:JobRun) WHERE r.finishedAt < $cutoff
CALL (r) {
  DELETE r
} IN TRANSACTIONS OF $batch ROWS
RETURN count(r) AS expired
