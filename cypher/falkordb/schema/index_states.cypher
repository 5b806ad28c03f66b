// FalkorDB: db.indexes(); a label's indexes are OPERATIONAL once they answer, and
// "[Indexing] n/m: UNDER CONSTRUCTION" while the server rebuilds them (after loading a store).
// idempotent: yes
CALL db.indexes() YIELD label, status
RETURN label, status AS state
