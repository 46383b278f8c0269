// How many sealed records each key id sealed (the id in the payload's
// mbx1:<key id>: prefix), counted by Migrate and Reseal: a start reads the
// stored count (sealed_count_get) and reports those under key ids the
// server does not hold.
MATCH (m:Memory)
WHERE m.encrypted = true AND m.payload STARTS WITH 'mbx1:'
RETURN split(m.payload, ':')[1] AS keyId, count(*) AS n
