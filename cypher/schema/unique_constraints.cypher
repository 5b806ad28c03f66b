// The single-property node uniqueness constraints and whether each is usable, as
// label, property, status ('OPERATIONAL' when enforced). migrate() checks its constraints here.
// Neo4j scans and validates the data while CREATE CONSTRAINT runs (duplicates fail that
// statement), so every listed constraint is enforced. The type is UNIQUENESS on early Neo4j 5
// releases and NODE_PROPERTY_UNIQUENESS on later ones; a NODE_KEY also enforces uniqueness.
// idempotent: yes
SHOW CONSTRAINTS YIELD type, entityType, labelsOrTypes, properties
WHERE entityType = 'NODE' AND type IN ['UNIQUENESS', 'NODE_PROPERTY_UNIQUENESS', 'NODE_KEY']
  AND size(properties) = 1
RETURN labelsOrTypes[0] AS label, properties[0] AS property, 'OPERATIONAL' AS status
