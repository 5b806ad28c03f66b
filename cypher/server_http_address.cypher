// Neo4j only: whether the server speaks HTTP and the address it advertises for it (Neo4j Browser
// is served at /browser/ there). Needs a user allowed to see the settings (the admin).
// idempotent: yes
SHOW SETTINGS YIELD name, value
WHERE name IN ['server.http.enabled', 'server.http.advertised_address']
RETURN name, value
