package neo4j

// inBatches runs a start-up pass over id-ordered batches: step handles the
// batch after the cursor after (in a write transaction of its own) and
// returns how many rows it read, at most size, and the id of the last one,
// which is the next batch's cursor. The pass ends with the first short
// batch.
func inBatches(size int, step func(after string) (n int, last string, err error)) error {
	for after := ""; ; {
		n, last, err := step(after)
		if err != nil || n < size {
			return err
		}
		after = last
	}
}
