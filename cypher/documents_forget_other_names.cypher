// Paths now stored as documents of their own (their files changed since they were skipped as
// copies) are no longer other names of another document. Reads every document carrying other
// names (O(documents)), once per batch of new documents.
// idempotent: yes
MATCH (d:Document)
WHERE d.also_uris IS NOT NULL AND any(u IN d.also_uris WHERE u IN $paths)
SET d.also_uris = [u IN d.also_uris WHERE NOT u IN $paths]
