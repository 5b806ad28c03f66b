// Uniqueness of one node property (schema op UniqueProperty; migrations only).
// `{{name}}`, `{{label}}`, `{{property}}` are identifiers, which Cypher cannot take as
// parameters: kgrag.graph.cypher.render() replaces each, backticks included, with an identifier
// from the allow-list in kgrag/graph/schema.py, and refuses anything else.
// Neo4j builds and validates the backing index before this returns (duplicates fail it here).
// idempotent: yes
CREATE CONSTRAINT `{{name}}` IF NOT EXISTS
FOR (n:`{{label}}`) REQUIRE n.`{{property}}` IS UNIQUE
