package neo4j

// inBatches runs a pass over the database (Migrate, Reseal) in id-ordered
// step handles the batch after the cursor after (in a write transaction of its own) and
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

// scopesOrNil is scopes as a statement's $scopes parameter: nil (every
// scope) stays null, where the driver would send a nil slice as an empty
// list, which `$scopes IS NULL OR m.scope IN $scopes` matches nothing of.
func scopesOrNil(scopes []string) any {
	if scopes == nil {
		return nil
	}
	return scopes
}
