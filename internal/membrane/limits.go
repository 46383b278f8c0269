package membrane

// Input limits. Oversized input is rejected with EINVALID before anything is
// written (the reference system's limits, applied to every write path).
const (
	MaxStringBytes  = 100_000
	MaxTags         = 100
	MaxTagBytes     = 256
	MaxPayloadBytes = 10 << 20
	// MaxJSONDepth bounds nesting of free-form JSON in payloads.
	MaxJSONDepth = 64
	// MaxBatch is the most records one ingestBatch call may write.
	MaxBatch = 10_000
	// MaxPageSize is the largest page a connection returns.
	MaxPageSize = 500
	// DefaultPageSize is the page size when first is not given.
	DefaultPageSize = 20
	// MaxMergeIDs is the most records one merge takes.
	MaxMergeIDs = 100
)

// MaxSalience bounds a record's salience, which is in [0, MaxSalience]: a
// client may create a record above 1 (reinforce never raises one past 1,
// and retrieval counts salience up to 1), but not at any float, where it
// would top every ordering and swamp every average.
const MaxSalience = 10.0
