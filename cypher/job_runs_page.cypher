// Job runs, newest first, keyset on (startedAt, id); all jobs when $job is null.
MATCH (r:JobRun)
WHERE ($job IS NULL OR r.job = $job)
  AND ($afterAt IS NULL OR r.startedAt < $afterAt OR (r.startedAt = $afterAt AND r.id < $afterId))
RETURN properties(r) AS run
ORDER BY r.startedAt DESC, r.id DESC
LIMIT $limit
