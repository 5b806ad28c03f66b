// graph_query template: the first transcript segments, in time order, of the readable recordings
// (documents of the audio modality), the most recently ingested first: for a question about
// "the recording" whose words match nothing it says. The recordings take turns: the first
// segment of each, then the second of each, and so on, so that one long recording does not fill
// every place. It reads every readable document's modality (O(documents)); the rule planner adds
// it only when the question asks about recordings.
// idempotent: yes
MATCH (d:Document)
WHERE d.modality = 'audio' AND d.status = 'complete'
  AND ($admin OR any(p IN d.acl WHERE p IN $principals))
WITH d
ORDER BY d.ingested_at DESC, d.uri
LIMIT $k
WITH collect(d) AS recordings
UNWIND range(0, size(recordings) - 1) AS turn
WITH recordings[turn] AS d, turn
MATCH (c:Chunk)-[:PART_OF]->(d)
WHERE c.start_s IS NOT NULL
WITH d, turn, c
ORDER BY turn, c.start_s, c.id
WITH d, turn, collect(c)[..$k] AS segments
UNWIND range(0, size(segments) - 1) AS place
WITH segments[place] AS c, d, turn, place
ORDER BY place, turn
WITH collect({c: c, d: d}) AS ordered
UNWIND range(0, size(ordered) - 1) AS rank
WITH ordered[rank].c AS c, ordered[rank].d AS d, rank
RETURN c.id AS id, 'chunk' AS kind, c.text AS text, d.id AS document_id, d.title AS title,
       d.uri AS uri, c.page AS page, c.start_s AS start_s, c.end_s AS end_s,
       c.table_number AS table_number, c.sheet AS sheet, c.table_row AS table_row,
       c.section AS section,
       1.0 / (1 + rank) AS score
ORDER BY score DESC
LIMIT $k
