// The status of each of the given records that exists, for checks that
// acknowledged writes survived (tests, load tests): one light row per
// record, without decoding payloads.
MATCH (m:Memory) WHERE m.id IN $ids
RETURN m.id AS id, m.status AS status
