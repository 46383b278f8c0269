package mcp

// The pure functions that shape output and check messages, for the table
// tests of package mcp_test.
var (
	Truncate    = truncate
	Snippet     = snippet
	MatchedText = matchedText
	ClampChars  = clampChars
	RenameField = func(field string, renames ...[2]string) string {
		rs := make([]rename, len(renames))
		for i, r := range renames {
			rs[i] = rename{r[0], r[1]}
		}
		return renameField(field, rs)
	}
)
