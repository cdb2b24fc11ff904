#!/usr/bin/env bash
# The yarn-am mini cluster harness driver (called by `make minicluster-up` / `minicluster-down`).
#
#   minicluster.sh build            resolve jars with Maven (only when pom.xml or the Hadoop version
#                                   changed) and compile, into target/HADOOP_VERSION/
#   minicluster.sh up   STATE_DIR   build, start in the background, wait for READY, write STATE_DIR/env
#   minicluster.sh down STATE_DIR   SIGTERM, wait up to 60 s, SIGKILL the rest; exits 0 when none runs
#   minicluster.sh java CLASS ARGS  run a Java main with the Hadoop classpath, HADOOP_CONF_DIR and the
#                                   Java 17 flags (e.g. DistributedShell's Client); on a Kerberized
#                                   cluster logged in from the test user's keytab first
#   minicluster.sh check STATE_DIR  prove the running cluster from Java: on a Kerberized one
#                                   SecureCheck (nodes, HDFS, delegation tokens), then a 2-container
#                                   DistributedShell job
#   minicluster.sh failover STATE_DIR    HA=1 cluster: stop the active RM, make the standby active,
#                                   wait until every NM is registered with it
#   minicluster.sh rm-restart STATE_DIR  RECOVERY=1 cluster: stop the RM and start it again with its
#                                   state, on the same addresses (HA=1: the active RM, made active
#                                   again); failover restarts a standby stopped by an earlier one
#   minicluster.sh nm-stop STATE_DIR N   stop NodeManager N (0-based) without unregistering; the RM
#                                   declares it LOST after yarn.nm.liveness-monitor.expiry-interval-ms
#   minicluster.sh nm-start STATE_DIR N  start a stopped NodeManager N again (same host and dirs, new
#                                   ports: a new node to the RM), wait until the RM has it RUNNING
#   Each control prints one line when done ("MINICLUSTER FAILOVER DONE active=rm2 ...") and exits 0,
#   or says why it cannot run here and exits 1.
#
# Environment (all optional):
#   MINICLUSTER_ARGS       extra flags for yarnam.minicluster.Main (e.g. "--web-port 8088")
#   MINICLUSTER_TIMEOUT    seconds to wait for READY (default 300)
#   MINICLUSTER_JAVA_OPTS  extra JVM options for the harness (default -Xmx2g)
#   MINICLUSTER_MVN_ARGS   extra Maven arguments (e.g. -Dmaven.repo.local=/some/dir)
#   HADOOP_USER_NAME       the user the cluster creates /user/NAME for (default: the OS user)
#   MINICLUSTER_SECURE     1: Kerberos mode (MiniKdc; make minicluster-up SECURE=1)
#   MINICLUSTER_RPC_PROTECTION  hadoop.rpc.protection in Kerberos mode: authentication (default),
#                          integrity or privacy (make minicluster-up SECURE=1 RPC_PROTECTION=privacy)
#   MINICLUSTER_HA         1: two RMs rm1 (active) and rm2 (standby), recovery on (make ... HA=1)
#   MINICLUSTER_RECOVERY   1: one RM with work-preserving recovery, restartable (make ... RECOVERY=1)
#   MINICLUSTER_LABELS     1: node labels gpu and fpga, NodeManager 1 in the exclusive gpu partition
#                          (make ... LABELS=1; README.md, "Node labels")
#   MINICLUSTER_PREEMPTION 1: queues batch and urgent, the CapacityScheduler's preemption monitor
#                          on (make ... PREEMPTION=1; README.md, "Preemption")
#   MINICLUSTER_PLACEMENT  placement-processor (or 1) or scheduler: the RM's
#                          yarn.resourcemanager.placement-constraints.handler, and three NodeManagers
#                          instead of two, so that a LABELS=1 cluster still has two in the default
#                          partition (make ... PLACEMENT=1; README.md, "Placement constraints")
#   MINICLUSTER_NM_EXPIRY_MS  NM liveness expiry in ms (make ... NM_EXPIRY_MS=5000; default 10000
#                          with HA/RECOVERY, else Hadoop's 600000, 20000 when Kerberized)
#   MINICLUSTER_LOG_FORMAT log aggregation file format: TFile (default) or IFile (make ... LOG_FORMAT=IFile)
#   MINICLUSTER_LOG_ROLL_SEC  rolling log aggregation every N seconds (make ... LOG_ROLL_SEC=5; default off)
#   MINICLUSTER_CONTROL_TIMEOUT  seconds a control command may take (default 180)
#   MINICLUSTER_HADOOP_VERSION  Hadoop release of the cluster: 3.1.x to 3.5.x (default
#                          3.4.3; make minicluster-up HADOOP_VERSION=3.1.4). Each version has its own
#                          classpath and classes under target/VERSION/; `java` uses the version of
#                          the sourced env (YARN_AM_HADOOP_VERSION) when set.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TARGET="$HERE/target"
DEFAULT_HADOOP_VERSION=3.4.3
# The benchmark's DistributedShell jar is the same 3.4.2 build for every cluster version (pom.xml; it
# runs on 3.4 and 3.5 jars).
DSHELL_JAR="$TARGET/dshell/hadoop-yarn-applications-distributedshell.jar"
MAIN_CLASS=yarnam.minicluster.Main
# NodeManagers of the cluster: write_env counts them from the READY line (PLACEMENT starts three).
NM_COUNT=2

log() { echo "minicluster: $*" >&2; }
die() { log "$*"; exit 1; }

# use_version VERSION: checks it and points the per-version paths (classpath, classes, Maven
# profile) at it; switching versions back and forth re-resolves nothing.
use_version() {
  HADOOP_VERSION="$1"
  case "$HADOOP_VERSION" in
    3.1.[0-9]*) MVN_PROFILE=hadoop-3.1 ;;
    3.2.[0-9]*) MVN_PROFILE=hadoop-3.2 ;;
    3.3.[0-9]*) MVN_PROFILE=hadoop-3.3 ;;
    3.4.[0-9]*) MVN_PROFILE="" ;;
    3.5.[0-9]*) MVN_PROFILE=hadoop-3.5 ;;
    *) die "HADOOP_VERSION=$HADOOP_VERSION: want a Hadoop release 3.1.x, 3.2.x, 3.3.x, 3.4.x or 3.5.x (e.g. 3.1.4, 3.2.4, 3.3.6, 3.4.3, 3.5.0)" ;;
  esac
  [[ "$HADOOP_VERSION" =~ ^3\.[1-5]\.[0-9]+$ ]] ||
    die "HADOOP_VERSION=$HADOOP_VERSION: want a Hadoop release 3.1.x, 3.2.x, 3.3.x, 3.4.x or 3.5.x (e.g. 3.1.4, 3.2.4, 3.3.6, 3.4.3, 3.5.0)"
  VTARGET="$TARGET/$HADOOP_VERSION"
  CLASSPATH_FILE="$VTARGET/classpath.txt"
  POM_STAMP="$VTARGET/classpath.pom.sha256"
  CLASSES="$VTARGET/classes"
}
use_version "${MINICLUSTER_HADOOP_VERSION:-$DEFAULT_HADOOP_VERSION}"

java17_opts() {
  local p out="-XX:+IgnoreUnrecognizedVMOptions"
  for p in java.lang java.lang.reflect java.io java.net java.nio sun.nio.ch java.math java.text \
    java.util java.util.concurrent java.util.zip sun.security.util sun.security.x509; do
    out+=" --add-opens=java.base/$p=ALL-UNNAMED"
  done
  # Hadoop 3.1's Kerberos name code reads sun.security.krb5.Config directly.
  out+=" --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED"
  out+=" --add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED"
  echo "$out"
}

find_java_home() {
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
    echo "$JAVA_HOME"
    return
  fi
  local j
  j="$(command -v java)" || die "no java on PATH and JAVA_HOME unset: install a JDK 17 (apt-get install openjdk-17-jdk-headless)"
  j="$(readlink -f "$j")"
  echo "${j%/bin/java}"
}

# Runs a long command in the background, printing a progress line every 15 s.
run_with_progress() {
  local what="$1" logfile="$2"
  shift 2
  "$@" >"$logfile" 2>&1 &
  local pid=$! start=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if (((SECONDS - start) % 15 == 0)); then
      local m2="${HOME}/.m2/repository"
      [[ "${MINICLUSTER_MVN_ARGS:-}" =~ -Dmaven\.repo\.local=([^ ]+) ]] && m2="${BASH_REMATCH[1]}"
      log "still $what ($((SECONDS - start)) s; $(du -sm "$m2" 2>/dev/null | cut -f1) MB in $m2)"
    fi
  done
  wait "$pid"
}

# One build of a release at a time: make test's lanes may ask for the same one at once (the memory
# tests read its classpath while the secure suite starts its cluster). The lock is held by a
# subshell, never by the cluster that `up` starts after the build.
cmd_build() {
  command -v javac >/dev/null || die "no javac on PATH: install a JDK 17 (apt-get install openjdk-17-jdk-headless)"
  mkdir -p "$VTARGET"
  ( flock 9 && build_locked ) 9>"$VTARGET/.build.lock" || exit $?
}

build_locked() {
  local sum
  sum="$(sha256sum "$HERE/pom.xml" | cut -d' ' -f1) $HADOOP_VERSION"
  local need_mvn=0
  if [[ ! -s "$CLASSPATH_FILE" || ! -f "$POM_STAMP" || "$(cat "$POM_STAMP")" != "$sum" ]]; then
    need_mvn=1
  else
    # A wiped Maven repository invalidates the cached classpath too.
    local jar
    while IFS= read -r jar; do
      [[ -f "$jar" ]] || { need_mvn=1; break; }
    done < <(tr ':' '\n' <"$CLASSPATH_FILE")
  fi
  if ((need_mvn)); then
    command -v mvn >/dev/null || die "no mvn on PATH: install Maven (apt-get install maven)"
    log "resolving Hadoop $HADOOP_VERSION jars with Maven (first run downloads ~140 MB; log: $VTARGET/mvn.log)"
    local start=$SECONDS
    # shellcheck disable=SC2086
    if ! run_with_progress "resolving jars" "$VTARGET/mvn.log" \
      mvn -B --no-transfer-progress -f "$HERE/pom.xml" ${MINICLUSTER_MVN_ARGS:-} \
      -Dhadoop.version="$HADOOP_VERSION" ${MVN_PROFILE:+-P$MVN_PROFILE} \
      dependency:build-classpath -Dmdep.outputFile="$CLASSPATH_FILE.tmp"; then
      tail -n 40 "$VTARGET/mvn.log" >&2
      die "Maven could not resolve the harness dependencies for Hadoop $HADOOP_VERSION (see $VTARGET/mvn.log)"
    fi
    mv "$CLASSPATH_FILE.tmp" "$CLASSPATH_FILE"
    echo "$sum" >"$POM_STAMP"
    rm -rf "$CLASSES"
    log "Hadoop $HADOOP_VERSION jars resolved in $((SECONDS - start)) s"
  fi

  local dshell
  dshell="$(tr ':' '\n' <"$CLASSPATH_FILE" | grep '/hadoop-yarn-applications-distributedshell-[^/]*\.jar$' | head -n1)"
  [[ -n "$dshell" ]] || die "no DistributedShell jar in $CLASSPATH_FILE: check pom.xml"
  if [[ ! -f "$DSHELL_JAR" ]] || ! cmp -s "$dshell" "$DSHELL_JAR"; then
    mkdir -p "$(dirname "$DSHELL_JAR")"
    cp "$dshell" "$DSHELL_JAR.tmp" && mv "$DSHELL_JAR.tmp" "$DSHELL_JAR"
  fi

  local stamp="$CLASSES/.stamp"
  if [[ ! -f "$stamp" ]] || [[ -n "$(find "$HERE/src" -newer "$stamp" -type f | head -n1)" ]]; then
    rm -rf "$CLASSES"
    mkdir -p "$CLASSES"
    # javac warns about sun.misc.Signal (used on purpose for a clean SIGTERM exit): show output on failure only.
    if ! javac -nowarn -encoding UTF-8 -d "$CLASSES" -cp "$(cat "$CLASSPATH_FILE")" \
      $(find "$HERE/src/main/java" -name '*.java') >"$VTARGET/javac.log" 2>&1; then
      cat "$VTARGET/javac.log" >&2
      die "compiling the harness against Hadoop $HADOOP_VERSION failed"
    fi
    cp -R "$HERE/src/main/resources/." "$CLASSES/"
    touch "$stamp"
    log "harness compiled against Hadoop $HADOOP_VERSION"
  fi
}

# Prints the pid in STATE_DIR/pid if that process is alive and is our harness.
harness_pid() {
  local state="$1" pid
  [[ -f "$state/pid" ]] || return 1
  pid="$(cat "$state/pid")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$MAIN_CLASS" || return 1
  echo "$pid"
}

ready_line() {
  grep -m1 '^MINICLUSTER READY ' "$1/logs/minicluster.log" 2>/dev/null
}

# field KEY LINE: the value of KEY=VALUE in the ready line.
field() {
  tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"
}

# quote_env NAME VALUE ...: export lines; values are single-quoted unless plainly safe, so the file
# reads the same to a shell and to a simple KEY=VALUE parser for the common case.
quote_env() {
  while (($# >= 2)); do
    if [[ "$2" =~ ^[A-Za-z0-9_./:,=@+-]*$ ]]; then
      echo "export $1=$2"
    else
      echo "export $1='${2//\'/\'\\\'\'}'"
    fi
    shift 2
  done
}

write_env() {
  local state="$1" line="$2" java_home="$3"
  local secure=()
  if [[ -n "$(field realm "$line")" ]]; then
    # Kerberos mode: the test user's identity, krb5.conf for gokrb5/kinit, a ticket cache path that
    # tests create (nothing is there yet).
    secure=(
      YARN_AM_SECURE 1
      YARN_AM_RPC_PROTECTION "$(field rpcprotection "$line")"
      YARN_AM_KERBEROS_REALM "$(field realm "$line")"
      YARN_AM_KDC "$(field kdc "$line")"
      YARN_AM_TEST_PRINCIPAL "$(field principal "$line")"
      YARN_AM_TEST_KEYTAB "$(field keytab "$line")"
      YARN_AM_KERBEROS_HOST localhost
      KRB5_CONFIG "$(field krb5conf "$line")"
      KRB5CCNAME "$state/kerberos/krb5cc_test"
    )
  fi
  local fault=()
  case "$(field mode "$line")" in
    ha) fault=(YARN_AM_HA 1 YARN_AM_RECOVERY 1) ;;
    recovery) fault=(YARN_AM_RECOVERY 1) ;;
    labels) fault=(YARN_AM_LABELS gpu) ;;
    preemption) fault=(YARN_AM_PREEMPTION 1) ;;
  esac
  local user nm_logs="" nm_local="" i nodes
  user="$(field user "$line")"
  IFS=, read -ra nodes <<<"$(field nodes "$line")"
  NM_COUNT=${#nodes[@]}
  for ((i = 0; i < NM_COUNT; i++)); do
    nm_logs+="${nm_logs:+,}$state/work/nm-$i/logs"
    nm_local+="${nm_local:+,}$state/work/nm-$i/local"
  done
  {
    echo "# written by make minicluster-up; source it: . .minicluster/env"
    quote_env \
      HADOOP_CONF_DIR "$state/conf" \
      YARN_AM_MINICLUSTER 1 \
      YARN_AM_DSHELL_JAR "$DSHELL_JAR" \
      YARN_AM_NM_LOG_DIRS "$nm_logs" \
      YARN_AM_NM_LOCAL_DIRS "$nm_local" \
      YARN_AM_NM_NODES "$(field nodes "$line")" \
      YARN_AM_RM_ADDRESS "$(field rm "$line")" \
      YARN_AM_RM_WEB "$(field web "$line")" \
      YARN_AM_HDFS "$(field hdfs "$line")" \
      YARN_AM_HADOOP_JAVA "$HERE/hadoop-java.sh" \
      YARN_AM_HADOOP_VERSION "$(field hadoop "$line")" \
      YARN_AM_MINICLUSTER_STATE "$state" \
      YARN_AM_MINICLUSTER_SH "$HERE/minicluster.sh" \
      YARN_AM_RM_ADDRESSES "$(field rms "$line")" \
      YARN_AM_RM_WEBS "$(field webs "$line")" \
      YARN_AM_NM_EXPIRY_MS "$(field nmexpiryms "$line")" \
      YARN_AM_REMOTE_LOG_DIR "$(field remotelogdir "$line")" \
      YARN_AM_PLACEMENT_HANDLER "$(field placement "$line")" \
      "${fault[@]}" \
      HADOOP_USER_NAME "$user" \
      JAVA_HOME "$java_home" \
      "${secure[@]}"
  } >"$state/env.tmp"
  mv "$state/env.tmp" "$state/env"
}

cmd_up() {
  local state
  state="$(mkdir -p "$1" && cd "$1" && pwd)"
  mkdir -p "$state/logs"
  local secure_args=()
  case "${MINICLUSTER_SECURE:-}" in
    1 | true | yes)
      case "${MINICLUSTER_RPC_PROTECTION:-authentication}" in
        authentication | integrity | privacy) ;;
        *) die "RPC_PROTECTION=$MINICLUSTER_RPC_PROTECTION: want authentication, integrity or privacy" ;;
      esac
      secure_args=(--secure --kerberos-dir "$state/kerberos"
        --rpc-protection "${MINICLUSTER_RPC_PROTECTION:-authentication}") ;;
    "" | 0 | false | no)
      [[ -z "${MINICLUSTER_RPC_PROTECTION:-}" ]] ||
        die "RPC_PROTECTION=$MINICLUSTER_RPC_PROTECTION needs SECURE=1 (Kerberos mode)" ;;
    *) die "SECURE=$MINICLUSTER_SECURE: want 1 (Kerberos mode) or 0/empty" ;;
  esac
  local fault_args=() want_mode=plain
  is_on "HA" "${MINICLUSTER_HA:-}" && { fault_args+=(--ha); want_mode=ha; }
  if is_on "RECOVERY" "${MINICLUSTER_RECOVERY:-}"; then
    fault_args+=(--recovery)
    [[ $want_mode == ha ]] || want_mode=recovery
  fi
  if is_on "LABELS" "${MINICLUSTER_LABELS:-}"; then
    [[ $want_mode == plain ]] || die "LABELS=1 with HA=1 or RECOVERY=1: the node-label control runs on the plain cluster only"
    fault_args+=(--labels)
    want_mode=labels
  fi
  if is_on "PREEMPTION" "${MINICLUSTER_PREEMPTION:-}"; then
    [[ $want_mode == plain ]] || die "PREEMPTION=1 with HA=1, RECOVERY=1 or LABELS=1: the preemption control runs on the plain cluster only"
    fault_args+=(--preemption)
    want_mode=preemption
  fi
  local want_placement=disabled
  case "${MINICLUSTER_PLACEMENT:-}" in
    "" | 0 | false | no | disabled) ;;
    1 | true | yes | placement-processor) want_placement=placement-processor ;;
    scheduler) want_placement=scheduler ;;
    *) die "PLACEMENT=$MINICLUSTER_PLACEMENT: want placement-processor (or 1), scheduler, or 0/empty (disabled, Hadoop's default)" ;;
  esac
  if [[ $want_placement != disabled ]]; then
    fault_args+=(--placement-handler "$want_placement" --nm-hosts 127.0.0.2,127.0.0.3,127.0.0.4)
  fi
  if [[ -n "${MINICLUSTER_NM_EXPIRY_MS:-}" ]]; then
    [[ "$MINICLUSTER_NM_EXPIRY_MS" =~ ^[1-9][0-9]*$ ]] ||
      die "NM_EXPIRY_MS=$MINICLUSTER_NM_EXPIRY_MS: want a number of milliseconds, e.g. 5000"
    fault_args+=(--nm-expiry-ms "$MINICLUSTER_NM_EXPIRY_MS")
  fi
  if [[ -n "${MINICLUSTER_LOG_ROLL_SEC:-}" ]]; then
    [[ "$MINICLUSTER_LOG_ROLL_SEC" =~ ^[1-9][0-9]*$ ]] ||
      die "LOG_ROLL_SEC=$MINICLUSTER_LOG_ROLL_SEC: want a number of seconds, e.g. 5"
    fault_args+=(--log-roll-sec "$MINICLUSTER_LOG_ROLL_SEC")
  fi
  case "${MINICLUSTER_LOG_FORMAT:-TFile}" in
    TFile | IFile) fault_args+=(--log-aggregation-format "${MINICLUSTER_LOG_FORMAT:-TFile}") ;;
    *) die "LOG_FORMAT=$MINICLUSTER_LOG_FORMAT: want TFile or IFile" ;;
  esac
  if ((${#secure_args[@]})) && [[ $want_mode != plain ]]; then
    die "SECURE=1 with HA=1 or RECOVERY=1: the fault controls run on the plain cluster only"
  fi
  local pid
  if pid="$(harness_pid "$state")"; then
    if [[ -n "$(ready_line "$state")" && -f "$state/env" ]]; then
      # A running cluster of the other mode (or another rpc protection) is not what was asked for.
      local want="plain" have="plain" line
      line="$(ready_line "$state")"
      ((${#secure_args[@]})) && want="secure/${MINICLUSTER_RPC_PROTECTION:-authentication}"
      [[ -n "$(field realm "$line")" ]] && have="secure/$(field rpcprotection "$line")"
      want+=" Hadoop $HADOOP_VERSION mode=$want_mode placement=$want_placement"
      local have_placement
      have_placement="$(field placement "$line")"
      have+=" Hadoop $(field hadoop "$line") mode=$(field mode "$line") placement=${have_placement:-disabled}"
      if [[ "$want" != "$have" ]]; then
        log "a $have cluster already runs in $state (pid $pid), $want was asked for:"
        log "stop it first (make minicluster-down MINICLUSTER_DIR=$state) or use another MINICLUSTER_DIR"
        return 1
      fi
      log "already running (pid $pid): $(ready_line "$state")"
      return 0
    fi
    log "pid $pid runs but never got ready: stopping it first"
    cmd_down "$state"
  fi
  rm -f "$state/pid" "$state/env"
  # Containers of a harness that died hard (SIGKILL, OOM) outlive it: clear them before wiping work/.
  local stale
  stale="$(procs_under "$state/work" | grep -v "^$$\$" | tr '\n' ' ' || true)"
  if [[ -n "${stale// /}" ]]; then
    log "killing processes left in $state/work by an earlier run: $stale"
    # shellcheck disable=SC2086
    kill -KILL $stale 2>/dev/null || true
  fi

  cmd_build
  local java_home
  java_home="$(find_java_home)"
  export JAVA_HOME="$java_home"
  rm -rf "$state/work" "$state/conf" "$state/kerberos" "$state/control"
  mkdir -p "$state/work" "$state/conf" "$state/control"
  local jvm_site=""
  if ((${#secure_args[@]})); then
    # The harness writes the core security keys here (SecureMode.writeJvmSite); on the classpath
    # so a fresh Configuration in the harness (the NMs' in-process localizer) sees them.
    mkdir -p "$state/kerberos/jvm-site"
    jvm_site="$state/kerberos/jvm-site:"
  fi
  [[ -f "$state/logs/minicluster.log" ]] && mv "$state/logs/minicluster.log" "$state/logs/minicluster.log.1"

  local user="${HADOOP_USER_NAME:-$(id -un)}"
  local start=$SECONDS timeout="${MINICLUSTER_TIMEOUT:-300}"
  log "starting (log: $state/logs/minicluster.log)"
  # setsid: the harness leads its own process group, so `down` can signal it and its children.
  # shellcheck disable=SC2086
  (cd "$state/work" && exec setsid "$java_home/bin/java" ${MINICLUSTER_JAVA_OPTS:--Xmx2g} $(java17_opts) \
    -cp "$jvm_site$CLASSES:$(cat "$CLASSPATH_FILE")" "$MAIN_CLASS" \
    --conf-dir "$state/conf" --work-dir "$state/work" --control-dir "$state/control" --user "$user" \
    "${secure_args[@]}" "${fault_args[@]}" ${MINICLUSTER_ARGS:-} \
    >"$state/logs/minicluster.log" 2>&1 </dev/null) &
  pid=$!
  echo "$pid" >"$state/pid"

  local line="" next=$((SECONDS + 15))
  while true; do
    line="$(ready_line "$state" || true)"
    [[ -n "$line" ]] && break
    if ! kill -0 "$pid" 2>/dev/null; then
      log "the harness exited before it was ready; last 60 log lines:"
      tail -n 60 "$state/logs/minicluster.log" >&2
      rm -f "$state/pid"
      return 1
    fi
    if ((SECONDS - start >= timeout)); then
      log "not ready after ${timeout} s; last 60 log lines:"
      tail -n 60 "$state/logs/minicluster.log" >&2
      cmd_down "$state"
      return 1
    fi
    if ((SECONDS >= next)); then
      log "still starting ($((SECONDS - start)) s): $(tail -n1 "$state/logs/minicluster.log" | cut -c1-160)"
      next=$((SECONDS + 15))
    fi
    sleep 1
  done
  write_env "$state" "$line" "$java_home"
  log "ready in $((SECONDS - start)) s: $line"
  log "environment: source $state/env"
}

# All descendants of pid $1 (children first found, recursively).
descendants() {
  local kids k
  kids="$(ps -eo pid=,ppid= | awk -v p="$1" '$2 == p { print $1 }')"
  for k in $kids; do
    echo "$k"
    descendants "$k"
  done
}

# Processes whose working directory is under $1 (containers the NMs launched run there).
procs_under() {
  local dir="$1" p cwd
  for p in /proc/[0-9]*; do
    cwd="$(readlink "$p/cwd" 2>/dev/null)" || continue
    [[ "$cwd" == "$dir" || "$cwd" == "$dir"/* ]] && echo "${p#/proc/}"
  done
  return 0
}

cmd_down() {
  local state="$1"
  [[ -d "$state" ]] || { log "not running"; return 0; }
  state="$(cd "$state" && pwd)"
  local pid kids=""
  if pid="$(harness_pid "$state")"; then
    kids="$(descendants "$pid" | tr '\n' ' ')"
    log "stopping pid $pid (SIGTERM)"
    kill -TERM "$pid" 2>/dev/null || true
    local waited=0
    while kill -0 "$pid" 2>/dev/null && ((waited < 60)); do
      sleep 1
      waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "still alive after 60 s: SIGKILL to process group $pid"
      kill -KILL -- "-$pid" 2>/dev/null || true
    else
      log "stopped after ${waited} s"
    fi
    kill -KILL -- "-$pid" 2>/dev/null || true
  else
    log "not running"
  fi
  # Containers run in their own sessions (the NM starts them with setsid): catch leftovers by the
  # pids seen before the stop and by working directory.
  local left
  left="$(
    for k in $kids; do kill -0 "$k" 2>/dev/null && echo "$k"; done
    [[ -d "$state/work" ]] && procs_under "$state/work"
  )"
  left="$(sort -u <<<"$left" | grep -v "^$$\$" | tr '\n' ' ' || true)"
  if [[ -n "${left// /}" ]]; then
    log "killing leftover processes: $left"
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null || true
  fi
  rm -f "$state/pid" "$state/env"
  return 0
}

cmd_java() {
  # The sourced env names the running cluster's version: talk to it with its own jars.
  [[ -n "${YARN_AM_HADOOP_VERSION:-}" ]] && use_version "$YARN_AM_HADOOP_VERSION"
  [[ -s "$CLASSPATH_FILE" ]] || die "harness not built for Hadoop $HADOOP_VERSION: run make minicluster-up HADOOP_VERSION=$HADOOP_VERSION first"
  local java_home conf="${HADOOP_CONF_DIR:-}"
  [[ -n "$conf" ]] || die "HADOOP_CONF_DIR is not set: source .minicluster/env first"
  java_home="$(find_java_home)"
  local krb=()
  if [[ "${YARN_AM_SECURE:-}" == 1 ]]; then
    # Java ignores KRB5_CONFIG: name the file. Log in from the test keytab first unless told to use
    # the ticket cache ($KRB5CCNAME, made by kinit or the Go side).
    [[ -n "${KRB5_CONFIG:-}" ]] && krb+=("-Djava.security.krb5.conf=$KRB5_CONFIG")
    if [[ "${MINICLUSTER_JAVA_LOGIN:-keytab}" == keytab ]]; then
      [[ -n "${YARN_AM_TEST_PRINCIPAL:-}" && -n "${YARN_AM_TEST_KEYTAB:-}" ]] ||
        die "YARN_AM_SECURE=1 but YARN_AM_TEST_PRINCIPAL/YARN_AM_TEST_KEYTAB unset: source the cluster's env"
      krb+=(yarnam.minicluster.KeytabLogin "$YARN_AM_TEST_PRINCIPAL" "$YARN_AM_TEST_KEYTAB")
    fi
  fi
  # shellcheck disable=SC2046
  exec "$java_home/bin/java" $(java17_opts) -cp "$conf:$CLASSES:$(cat "$CLASSPATH_FILE")" "${krb[@]}" "$@"
}

cmd_check() {
  local state="$1"
  [[ -f "$state/env" ]] || die "no env in $state: start a cluster there first (minicluster.sh up $state)"
  # shellcheck disable=SC1091
  source "$state/env"
  local start=$SECONDS
  if [[ "${YARN_AM_SECURE:-}" == 1 ]]; then
    log "SecureCheck as $YARN_AM_TEST_PRINCIPAL (hadoop.rpc.protection=$YARN_AM_RPC_PROTECTION)"
    "$HERE/hadoop-java.sh" yarnam.minicluster.SecureCheck 2> >(grep -v ' INFO ' >&2) ||
      die "SecureCheck failed"
  fi
  case "${YARN_AM_HADOOP_VERSION:-$DEFAULT_HADOOP_VERSION}" in
    3.4.* | 3.5.*) ;;
    *) die "DistributedShell (the 3.4.2 jar) needs Hadoop 3.4 or 3.5 jars (it calls commons-cli methods older releases lack); this cluster runs Hadoop $YARN_AM_HADOOP_VERSION: check it with bin/yarn-am cluster or make test-compat" ;;
  esac
  log "DistributedShell, 2 containers"
  local out
  out="$(mktemp)"
  if ! "$HERE/hadoop-java.sh" org.apache.hadoop.yarn.applications.distributedshell.Client \
    -jar "$YARN_AM_DSHELL_JAR" -shell_command 'echo dshell on $NM_HOST' -num_containers 2 \
    -master_memory 512 -container_resources memory-mb=512,vcores=1,yarn.io/gpu=1 >"$out" 2>&1; then
    grep -v '^\s*at ' "$out" | grep -i 'error\|exception\|diagnostics' | tail -n 20 >&2
    rm -f "$out"
    die "DistributedShell failed"
  fi
  grep -o 'Submitted application application_[0-9_]*' "$out" >&2 || true
  rm -f "$out"
  log "check OK in $((SECONDS - start)) s"
}

# is_on NAME VALUE: true for 1/true/yes, false for empty/0/false/no, dies otherwise.
is_on() {
  case "$2" in
    1 | true | yes) return 0 ;;
    "" | 0 | false | no) return 1 ;;
    *) die "$1=$2: want 1 or 0/empty" ;;
  esac
}

# control STATE_DIR COMMAND...: hands COMMAND to the running harness (Controls.java) and prints
# its done line; exit 1 with its reason when it cannot run.
cmd_control() {
  local state="$1"
  shift
  [[ -d "$state" ]] || die "$state: no mini cluster state dir (start one: make minicluster-up)"
  state="$(cd "$state" && pwd)"
  harness_pid "$state" >/dev/null || die "no mini cluster runs in $state (start one: make minicluster-up)"
  [[ -n "$(ready_line "$state")" ]] || die "the mini cluster in $state is not ready yet"
  local dir="$state/control" id
  [[ -d "$dir" ]] || die "$dir missing: this cluster was started by a harness without fault controls; restart it"
  id="$(date +%s%N)-$$"
  printf '%s\n' "$*" >"$dir/.$id.tmp"
  mv "$dir/.$id.tmp" "$dir/$id.cmd"
  local timeout="${MINICLUSTER_CONTROL_TIMEOUT:-180}" start=$SECONDS
  while [[ ! -f "$dir/$id.out" ]]; do
    if ((SECONDS - start >= timeout)); then
      rm -f "$dir/$id.cmd"
      die "$1: no answer from the harness after ${timeout} s (log: $state/logs/minicluster.log)"
    fi
    harness_pid "$state" >/dev/null || die "$1: the harness exited (log: $state/logs/minicluster.log)"
    sleep 0.2
  done
  local out
  out="$(cat "$dir/$id.out")"
  rm -f "$dir/$id.out"
  case "$out" in
    "OK "*) echo "${out#OK }" ;;
    *) die "$1: ${out#ERR }" ;;
  esac
}

case "${1:-}" in
  build) cmd_build ;;
  up) [[ -n "${2:-}" ]] || die "usage: $0 up STATE_DIR"; cmd_up "$2" ;;
  down) [[ -n "${2:-}" ]] || die "usage: $0 down STATE_DIR"; cmd_down "$2" ;;
  java) shift; cmd_java "$@" ;;
  check) [[ -n "${2:-}" ]] || die "usage: $0 check STATE_DIR"; cmd_check "$2" ;;
  failover) [[ -n "${2:-}" ]] || die "usage: $0 failover STATE_DIR"; cmd_control "$2" failover ;;
  rm-restart) [[ -n "${2:-}" ]] || die "usage: $0 rm-restart STATE_DIR"; cmd_control "$2" rm-restart ;;
  nm-stop)
    [[ -n "${2:-}" && "${3:-}" =~ ^[0-9]+$ ]] || die "usage: $0 nm-stop STATE_DIR N (N: NodeManager index, 0-based)"
    cmd_control "$2" nm-stop "$3" ;;
  nm-start)
    [[ -n "${2:-}" && "${3:-}" =~ ^[0-9]+$ ]] || die "usage: $0 nm-start STATE_DIR N (N: NodeManager index, 0-based)"
    cmd_control "$2" nm-start "$3" ;;
  *) die "usage: $0 build | up STATE_DIR | down STATE_DIR | java CLASS [ARGS...] | check STATE_DIR | failover STATE_DIR | rm-restart STATE_DIR | nm-stop STATE_DIR N | nm-start STATE_DIR N" ;;
esac
