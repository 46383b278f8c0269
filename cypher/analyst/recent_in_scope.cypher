// The newest records of a scope.
// :param scope => 'project:alpha'
MATCH (m:Memory {scope: $scope})
RETURN m.name AS name, m.type AS type, m.sensitivity AS sensitivity, m.salience AS salience, m.createdAt AS createdAt, m.id AS id
ORDER BY m.createdAt DESC
LIMIT 50
