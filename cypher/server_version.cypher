// The Neo4j server version ('5.26.1', '2026.01.0'), read once at connect to pick the
// statement overlays (kgrag.graph.neo4j_store.overlays_for).
// idempotent: yes
CALL dbms.components() YIELD versions RETURN versions[0] AS v
