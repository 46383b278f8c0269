// The records a listing starts from without a text filter: every record,
// the ordering index walked in order (see records_page).
MATCH (m:Memory)
