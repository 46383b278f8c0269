// Every record: what a production maintenance pass reaches (the first
// clause of maintenance statements).
MATCH (m:Memory)
