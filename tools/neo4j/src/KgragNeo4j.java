// Starts a Neo4j Community server from its Maven Central jars, with the arguments of Neo4j's own
// launcher (--home-dir, --config-dir). One class for every release: 5.x ships
// org.neo4j.server.CommunityEntryPoint, 2026.x does not, and both start through NeoBootstrapper.
// Run as a Java source file by scripts/neo4j.sh; nothing here is packaged.
public final class KgragNeo4j {
    private KgragNeo4j() {}

    public static void main(String[] args) {
        int status = org.neo4j.server.NeoBootstrapper.start(
                new org.neo4j.server.CommunityBootstrapper(), args);
        if (status != 0) {
            System.exit(status);
        }
    }
}
