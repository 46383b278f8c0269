package membrane

// Waiting is how many calls wait for b's next call of its embedder, so that
// a test knows the batch before it lets the call under way finish.
func (b *BatchingEmbedder) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}
