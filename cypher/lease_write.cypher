// Write job lease $key as the domain decided (a null holder frees it).
MATCH (l:JobLease {key: $key})
SET l += $props
