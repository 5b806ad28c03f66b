// Wait until every index (constraint-backing ones included) is ONLINE; the server raises an
// error if one FAILED or the timeout ($timeout_s, whole seconds) runs out. Run by migrate().
// idempotent: yes
CALL db.awaitIndexes($timeout_s)
