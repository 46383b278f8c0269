#!/usr/bin/env bash
# Local Neo4j 5.26 community server for development and tests, built from Maven Central
# (tools/neo4j-launcher). No Docker needed. See docs/neo4j-local.md.
#
# Usage: scripts/neo4j.sh start|stop|restart|status|logs [-f]
#
# Environment (defaults in brackets):
#   NEO4J_HOME_DIR       data dir, one server per dir             [<repo>/.neo4j/dev]
#   NEO4J_BOLT_PORT      Bolt port on 127.0.0.1                   [7687]
#   NEO4J_HTTP_PORT      HTTP + Browser port; 0 or negative = off [7474]
#   NEO4J_HEAP           JVM heap (-Xms = -Xmx)                   [2g]
#   NEO4J_PAGECACHE      page cache size                          [1g]
#   NEO4J_START_TIMEOUT  seconds to wait for readiness            [180]
#   NEO4J_STOP_TIMEOUT   seconds to wait after SIGTERM            [60]
#   NEO4J_TX_TIMEOUT     db.transaction.timeout                   [5m]
#   NEO4J_JAVA_OPTS      extra JVM flags                          []
#   NEO4J_EMBED          on: build tools/neo4j-embed and install it  [on]
#                        in <data dir>/plugins (membrane.embed: vector
#                        search with no embedding service); off: remove it
#   NEO4J_EMBED_WARM     on: load the embedding model right after start [off]
#   JAVA_HOME            Java 17 (or 21); else `java` from PATH
#
# Exit codes of `status`: 0 running and Bolt answering, 3 not running,
# 4 process alive but Bolt not answering (starting, or hung).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
LAUNCHER_DIR="$REPO_ROOT/tools/neo4j-launcher"
MAIN_CLASS="membrane.tools.Neo4jLauncher"
CLASSPATH_FILE="$LAUNCHER_DIR/target/classpath.txt"
EMBED_DIR="$REPO_ROOT/tools/neo4j-embed"
EMBED_NAME="membrane-neo4j-embed.jar"
EMBED_JAR="$EMBED_DIR/target/plugins/$EMBED_NAME"

NEO4J_HOME_DIR="${NEO4J_HOME_DIR:-$REPO_ROOT/.neo4j/dev}"
NEO4J_BOLT_PORT="${NEO4J_BOLT_PORT:-7687}"
NEO4J_HTTP_PORT="${NEO4J_HTTP_PORT:-7474}"
NEO4J_HEAP="${NEO4J_HEAP:-2g}"
NEO4J_PAGECACHE="${NEO4J_PAGECACHE:-1g}"
NEO4J_START_TIMEOUT="${NEO4J_START_TIMEOUT:-180}"
NEO4J_STOP_TIMEOUT="${NEO4J_STOP_TIMEOUT:-60}"
NEO4J_TX_TIMEOUT="${NEO4J_TX_TIMEOUT:-5m}"
NEO4J_JAVA_OPTS="${NEO4J_JAVA_OPTS:-}"
NEO4J_EMBED="${NEO4J_EMBED:-on}"
NEO4J_EMBED_WARM="${NEO4J_EMBED_WARM:-off}"
HOST="127.0.0.1"

if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then JAVA="$JAVA_HOME/bin/java"; else JAVA="java"; fi

log() { printf 'neo4j.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# Resolve the data dir to an absolute path (relative values are relative to the current directory).
# Only `start` creates it.
abs_home() {
  [[ "${1:-}" == create ]] && mkdir -p "$NEO4J_HOME_DIR"
  NEO4J_HOME_DIR="$(realpath -m "$NEO4J_HOME_DIR")"
  PID_FILE="$NEO4J_HOME_DIR/neo4j.pid"
  LOG_FILE="$NEO4J_HOME_DIR/neo4j.log"
  LOCK_FILE="$NEO4J_HOME_DIR/.neo4j.sh.lock"
}

port_open() { timeout 2 bash -c ": >/dev/tcp/$HOST/$1" 2>/dev/null; }

# Prints the pid if the pid file points at a live launcher for this data dir; else returns 1.
live_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid cmd
  pid="$(tr -dc '0-9' <"$PID_FILE")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
  [[ "$cmd" == *"$MAIN_CLASS"* && "$cmd" == *"--home $NEO4J_HOME_DIR "* ]] || return 1
  echo "$pid"
}

# proc_arg PID FLAG: the value of a launcher flag (e.g. --bolt) of a running process.
proc_arg() {
  local -a argv
  mapfile -d '' -t argv <"/proc/$1/cmdline" 2>/dev/null || return 1
  local i
  for ((i = 0; i + 1 < ${#argv[@]}; i++)); do
    [[ "${argv[i]}" == "$2" ]] && { echo "${argv[i + 1]}"; return 0; }
  done
  return 1
}

clear_stale_pid() {
  if [[ -f "$PID_FILE" ]] && ! live_pid >/dev/null; then
    log "removing stale pid file $PID_FILE (pid $(tr -dc '0-9' <"$PID_FILE" || true) is not a running launcher)"
    rm -f "$PID_FILE"
  fi
}

needs_build() {
  [[ -s "$CLASSPATH_FILE" && -f "$LAUNCHER_DIR/target/classes/${MAIN_CLASS//.//}.class" ]] || return 0
  [[ "$LAUNCHER_DIR/pom.xml" -nt "$CLASSPATH_FILE" ]] && return 0
  [[ -n "$(find "$LAUNCHER_DIR/src" -newer "$CLASSPATH_FILE" -type f -print -quit)" ]] && return 0
  # Jars deleted from ~/.m2 since the last build?
  local -a jars
  local jar
  IFS=":" read -r -a jars <"$CLASSPATH_FILE" || true
  for jar in "${jars[@]}"; do [[ -f "$jar" ]] || return 0; done
  return 1
}

# maven_build DIR STAMP NEEDS WHAT DOWNLOAD [HINT]: builds DIR's pom with Maven when the function
# NEEDS says so, one build at a time per DIR (flock), then bumps STAMP so that NEEDS sees it fresh
# (build-classpath leaves an unchanged file untouched). HINT ends the error messages.
maven_build() {
  local dir="$1" stamp="$2" needs="$3" what="$4" download="$5" hint="${6:-}"
  mkdir -p "$dir/target"
  (
    flock 9
    if "$needs"; then
      command -v mvn >/dev/null || die "mvn not found; needed once to build $dir$hint"
      log "building $what $dir with Maven (the very first build downloads ~$download into ~/.m2) ..."
      local t0=$SECONDS
      if ! mvn -B -q -Dstyle.color=never -Dmaven.artifact.threads=8 -f "$dir/pom.xml" package \
        >"$dir/target/build.log" 2>&1; then
        tail -n 40 "$dir/target/build.log" >&2
        die "maven build of $dir failed (log: $dir/target/build.log$hint)"
      fi
      touch "$stamp"
      log "$what built in $((SECONDS - t0))s"
    fi
  ) 9>"$dir/target/.build.lock"
}

build() {
  maven_build "$LAUNCHER_DIR" "$CLASSPATH_FILE" needs_build "the launcher" "180 MB from Maven Central"
}

embed_on() {
  case "$NEO4J_EMBED" in
    on | 1 | true | yes) return 0 ;;
    off | 0 | false | no) return 1 ;;
    *) die "NEO4J_EMBED must be on or off, not '$NEO4J_EMBED'" ;;
  esac
}

# The embedding plugin needs a build when its jar is missing or older than its pom or sources.
needs_embed_build() {
  [[ -s "$EMBED_JAR" ]] || return 0
  [[ "$EMBED_DIR/pom.xml" -nt "$EMBED_JAR" ]] && return 0
  [[ -n "$(find "$EMBED_DIR/src" -newer "$EMBED_JAR" -type f -print -quit)" ]] && return 0
  return 1
}

build_embed() {
  maven_build "$EMBED_DIR" "$EMBED_JAR" needs_embed_build "the embedding plugin" "130 MB" \
    "; NEO4J_EMBED=off starts Neo4j without it"
}

# Installs the embedding plugin in the data dir's plugins/ (NEO4J_EMBED=on) or removes it (off).
# A copy of its own, not the build's jar: a rebuild for another data dir must not rewrite a jar
# that a running server reads classes from. Written beside and renamed, so it is never half there.
install_embed() {
  local dir="$NEO4J_HOME_DIR/plugins"
  mkdir -p "$dir"
  if ! embed_on; then
    rm -f "$dir/$EMBED_NAME"
    return 0
  fi
  build_embed
  if ! cmp -s "$EMBED_JAR" "$dir/$EMBED_NAME"; then
    cp "$EMBED_JAR" "$dir/.$EMBED_NAME.tmp"
    mv -f "$dir/.$EMBED_NAME.tmp" "$dir/$EMBED_NAME"
  fi
}

print_log_tail() {
  log "last 40 lines of $LOG_FILE:"
  tail -n 40 "$LOG_FILE" >&2 || true
  log "full log: $LOG_FILE"
}

# Waits until the launcher $1 prints NEO4J_READY (default database available) and Bolt answers.
wait_ready() {
  local pid="$1" t0=$SECONDS
  while ((SECONDS - t0 < NEO4J_START_TIMEOUT)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "Neo4j (pid $pid) exited during startup"
      rm -f "$PID_FILE"
      print_log_tail
      return 1
    fi
    if grep -q '^NEO4J_READY ' "$LOG_FILE" 2>/dev/null && port_open "$NEO4J_BOLT_PORT"; then
      log "ready after $((SECONDS - t0))s: $(grep '^NEO4J_READY ' "$LOG_FILE" | tail -n 1)"
      return 0
    fi
    sleep 0.5
  done
  log "timed out after ${NEO4J_START_TIMEOUT}s waiting for Neo4j (pid $pid); stopping it"
  print_log_tail
  stop_pid "$pid" || true
  return 1
}

stop_pid() {
  local pid="$1" t0=$SECONDS
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS - t0 >= NEO4J_STOP_TIMEOUT)); then
      log "pid $pid still alive after ${NEO4J_STOP_TIMEOUT}s; sending SIGKILL (next start will run recovery)"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 1
      break
    fi
    sleep 0.2
  done
  rm -f "$PID_FILE"
  log "stopped (pid $pid) in $((SECONDS - t0))s"
}

cmd_start() {
  abs_home create
  exec 8>"$LOCK_FILE"
  flock 8
  clear_stale_pid
  local pid
  if pid="$(live_pid)"; then
    local bolt http
    bolt="$(proc_arg "$pid" --bolt || echo "$NEO4J_BOLT_PORT")"
    http="$(proc_arg "$pid" --http || echo "$NEO4J_HTTP_PORT")"
    if [[ "$bolt" != "$NEO4J_BOLT_PORT" || ( "$http" != "$NEO4J_HTTP_PORT" && "$NEO4J_HTTP_PORT" -gt 0 ) ]]; then
      log "warning: the running server uses bolt $bolt / http $http, not the requested $NEO4J_BOLT_PORT / $NEO4J_HTTP_PORT (stop it first to change ports)"
    fi
    NEO4J_BOLT_PORT="$bolt"
    if port_open "$NEO4J_BOLT_PORT"; then
      log "already running (pid $pid) bolt://$HOST:$NEO4J_BOLT_PORT, data dir $NEO4J_HOME_DIR"
      return 0
    fi
    log "launcher pid $pid for $NEO4J_HOME_DIR is alive but Bolt port $NEO4J_BOLT_PORT is not answering yet; waiting"
    wait_ready "$pid"
    return
  fi
  port_open "$NEO4J_BOLT_PORT" && die "port $HOST:$NEO4J_BOLT_PORT is already in use by another process (another data dir? set NEO4J_BOLT_PORT; for scripts/test.sh, NEO4J_TEST_BOLT_PORT)"
  if ((NEO4J_HTTP_PORT > 0)) && port_open "$NEO4J_HTTP_PORT"; then
    die "port $HOST:$NEO4J_HTTP_PORT is already in use by another process (set NEO4J_HTTP_PORT, or 0 to disable HTTP)"
  fi

  command -v "$JAVA" >/dev/null || die "java not found (need Java 17 or 21; set JAVA_HOME)"
  build
  install_embed
  local cp
  cp="$LAUNCHER_DIR/target/classes:$(cat "$CLASSPATH_FILE")"
  local -a extra=(--plugins "$NEO4J_HOME_DIR/plugins")
  if embed_on; then
    case "$NEO4J_EMBED_WARM" in on | 1 | true | yes) extra+=(--embed-warm) ;; esac
  fi

  local http_port="$NEO4J_HTTP_PORT"
  ((http_port > 0)) || http_port=0
  # JVM flags: the predefined server.jvm.additional of a 5.26 tarball, minus
  # -XX:+TrustFinalNonStaticFields (not for embedded use). java.nio must be opened on Java 17.
  local -a jvm=(
    "-Xms$NEO4J_HEAP" "-Xmx$NEO4J_HEAP"
    --add-opens=java.base/java.nio=ALL-UNNAMED
    --add-opens=java.base/java.io=ALL-UNNAMED
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
    -XX:+UseG1GC -XX:-OmitStackTraceInFastThrow -XX:+ExitOnOutOfMemoryError
    -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints
    -Djdk.nio.maxCachedBufferSize=1024 -Dio.netty.tryReflectionSetAccessible=true
    -Dlog4j2.disable.jmx=true -Dfile.encoding=UTF-8
  )
  # shellcheck disable=SC2206
  [[ -n "$NEO4J_JAVA_OPTS" ]] && jvm+=($NEO4J_JAVA_OPTS)

  [[ -f "$LOG_FILE" ]] && mv -f "$LOG_FILE" "$LOG_FILE.1"
  log "starting Neo4j: data dir $NEO4J_HOME_DIR, bolt $NEO4J_BOLT_PORT, http $http_port, heap $NEO4J_HEAP, page cache $NEO4J_PAGECACHE, embedder $NEO4J_EMBED"
  (
    cd "$NEO4J_HOME_DIR"
    exec 8>&- # the start lock must not leak into the long-running server
    exec setsid nohup "$JAVA" "${jvm[@]}" -cp "$cp" "$MAIN_CLASS" \
      --home "$NEO4J_HOME_DIR" --host "$HOST" --bolt "$NEO4J_BOLT_PORT" --http "$http_port" \
      --pagecache "$NEO4J_PAGECACHE" --tx-timeout "$NEO4J_TX_TIMEOUT" "${extra[@]}" \
      </dev/null >>"$LOG_FILE" 2>&1
  ) &
  pid=$!
  echo "$pid" >"$PID_FILE"
  wait_ready "$pid"
}

cmd_stop() {
  abs_home
  [[ -d "$NEO4J_HOME_DIR" ]] || { log "not running (no data dir $NEO4J_HOME_DIR)"; return 0; }
  exec 8>"$LOCK_FILE"
  flock 8
  local pid
  if ! pid="$(live_pid)"; then
    clear_stale_pid
    log "not running (data dir $NEO4J_HOME_DIR)"
    return 0
  fi
  log "stopping Neo4j (pid $pid, data dir $NEO4J_HOME_DIR)"
  stop_pid "$pid"
}

cmd_status() {
  abs_home
  local pid
  if ! pid="$(live_pid)"; then
    echo "not running (data dir $NEO4J_HOME_DIR)"
    return 3
  fi
  # Report the ports the running process was started with, not the ones in the environment.
  local bolt http
  bolt="$(proc_arg "$pid" --bolt || echo "$NEO4J_BOLT_PORT")"
  http="$(proc_arg "$pid" --http || echo "$NEO4J_HTTP_PORT")"
  if port_open "$bolt"; then
    local http_url="http off"
    ((http > 0)) && http_url="http://$HOST:$http/browser/"
    echo "running (pid $pid) bolt://$HOST:$bolt $http_url, data dir $NEO4J_HOME_DIR"
    return 0
  fi
  echo "process alive (pid $pid) but Bolt port $bolt not answering (starting or hung), data dir $NEO4J_HOME_DIR"
  return 4
}

cmd_logs() {
  abs_home
  [[ -f "$LOG_FILE" ]] || die "no log file at $LOG_FILE"
  echo "==> $LOG_FILE (debug log: $NEO4J_HOME_DIR/logs/debug.log)" >&2
  if [[ "${1:-}" == "-f" ]]; then exec tail -n 100 -F "$LOG_FILE"; fi
  tail -n 200 "$LOG_FILE"
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  restart) cmd_stop; cmd_start ;;
  status) cmd_status ;;
  logs) shift; cmd_logs "$@" ;;
  *) echo "usage: $0 start|stop|restart|status|logs [-f]" >&2; exit 2 ;;
esac
