// Remove entities among the given ids that nothing mentions or depicts any more.
// idempotent: yes
UNWIND $ids AS id
MATCH (e:Entity {id: id})
OPTIONAL MATCH (e)<-[s:MENTIONS|DEPICTS]-()
WITH e, count(s) AS support
WHERE support = 0
DETACH DELETE e
