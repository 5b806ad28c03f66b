// How a question was understood: the standalone question after conversation memory, the
// entities it names, the entities its answer names, the groundedness of its answer, and the
// earlier query whose answer (and evidence) a reformat request reused.
// idempotent: yes
MATCH (q:Query {id: $id})
SET q.resolved_text = $resolved_text, q.entity_ids = $entity_ids,
    q.entity_names = $entity_names, q.answer_entities = $answer_entities,
    q.groundedness = $groundedness, q.reuses = $reuses
