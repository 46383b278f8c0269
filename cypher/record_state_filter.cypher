($statuses IS NULL OR __V__.status IN $statuses)
AND ($minSalience IS NULL OR __V__.salience >= $minSalience)
AND ($maxSalience IS NULL OR __V__.salience <= $maxSalience)
