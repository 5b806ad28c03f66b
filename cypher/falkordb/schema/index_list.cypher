// FalkorDB: db.indexes(); `types` maps each property to its index kinds (RANGE, FULLTEXT,
// VECTOR), `options` their settings (a vector index's dimension, M, efConstruction...).
// idempotent: yes
CALL db.indexes() YIELD label, properties, types, options, entitytype
RETURN types, entitytype, label, properties, options
