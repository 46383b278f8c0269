// How many records of each type and status.
MATCH (m:Memory)
RETURN m.type AS type, m.status AS status, count(*) AS records, round(avg(m.salience), 3) AS avgSalience
ORDER BY type, status
