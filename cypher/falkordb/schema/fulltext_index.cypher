// FalkorDB: full-text indexes are created by procedure, one per label, unnamed; label and
// property are string arguments, so they are parameters here (still from the allow-list).
// idempotent: yes
CALL db.idx.fulltext.createNodeIndex($label, $property)
