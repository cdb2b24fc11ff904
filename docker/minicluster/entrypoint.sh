#!/usr/bin/env bash
# yarn-am-minicluster: the entry point of the yarn-am mini cluster image (docker/README.md).
#
#   docker run --network host -v DIR:DIR -e MINICLUSTER_EXPORT=DIR yarn-am/minicluster [HARNESS FLAGS]
#
# Starts the harness (yarnam.minicluster.Main) with fixed ports, writes the client configuration to
# $MINICLUSTER_EXPORT/conf, the NodeManagers' work and log dirs to $MINICLUSTER_EXPORT/work and, with
# --secure, the keytabs and krb5.conf to $MINICLUSTER_EXPORT/kerberos; when the cluster is ready it
# prints the harness's "MINICLUSTER READY ..." line and writes $MINICLUSTER_EXPORT/env (export lines
# for a client on the host). Mounting the directory at the same path inside and outside makes every
# path in those files valid on the host. SIGTERM/SIGINT stop the cluster (exit 0).
#
# Environment: MINICLUSTER_EXPORT (default /export), MINICLUSTER_JAVA_OPTS (default -Xmx2g),
# HADOOP_USER_NAME (owner of /user/NAME in HDFS; default root). Harness flags given as arguments
# (e.g. --rm-port 9032 --nm-gpus 8 --secure --rpc-protection privacy) override the defaults below.
set -euo pipefail

HOME_DIR=/opt/yarn-am-minicluster
EXPORT="${MINICLUSTER_EXPORT:-/export}"
CONF="$EXPORT/conf"
WORK="$EXPORT/work"
KERBEROS="$EXPORT/kerberos"

log() { echo "yarn-am-minicluster: $*" >&2; }

case "${1:-}" in
  -h | --help)
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    echo
    exec java -cp "$HOME_DIR/classes:$(cat "$HOME_DIR/classpath.txt")" yarnam.minicluster.Main --help
    ;;
esac

# Fixed ports (docker/README.md, "Ports"): a host client needs to know them before the cluster runs,
# and they stay out of the kernel's ephemeral range (32768-60999) that free ports come from.
defaults=(--rm-port 28032 --scheduler-port 28030 --tracker-port 28031 --admin-port 28033
  --web-port 28088 --nn-port 28020 --nn-http-port 28070)
secure=0
for a in "$@"; do [[ "$a" == --secure ]] && secure=1; done
jvm_site=""
# control/ is where the harness takes fault-control commands (its --control-dir default).
rm -rf "$WORK" "$CONF" "$KERBEROS" "$EXPORT/control" "$EXPORT/env"
mkdir -p "$WORK" "$CONF"
if ((secure)); then
  defaults+=(--kerberos-dir "$KERBEROS" --kdc-port 28089)
  # The harness writes the core security keys to jvm-site/core-site.xml; on the classpath so every
  # Configuration made inside the JVM sees them (testdata/minicluster/README.md, Kerberos mode).
  mkdir -p "$KERBEROS/jvm-site"
  jvm_site="$KERBEROS/jvm-site:"
fi

java17_opts=(-XX:+IgnoreUnrecognizedVMOptions)
for p in java.lang java.lang.reflect java.io java.net java.nio sun.nio.ch java.math java.text \
  java.util java.util.concurrent java.util.zip sun.security.util sun.security.x509; do
  java17_opts+=("--add-opens=java.base/$p=ALL-UNNAMED")
done
# Hadoop 3.1's Kerberos name code reads sun.security.krb5.Config directly.
java17_opts+=(--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED
  --add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED)

# field KEY LINE: the value of KEY=VALUE in the ready line.
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

write_env() {
  local line="$1" nodes n i=0 logs="" locals=""
  nodes="$(field nodes "$line")"
  for n in ${nodes//,/ }; do
    logs+="${logs:+,}$WORK/nm-$i/logs"
    locals+="${locals:+,}$WORK/nm-$i/local"
    i=$((i + 1))
  done
  {
    echo "# written by yarn-am-minicluster when the cluster was ready; source it"
    echo "export HADOOP_CONF_DIR=$CONF"
    echo "export HADOOP_USER_NAME=$(field user "$line")"
    echo "export YARN_AM_HADOOP_VERSION=$(field hadoop "$line")"
    echo "export YARN_AM_RM_ADDRESS=$(field rm "$line")"
    echo "export YARN_AM_RM_WEB=$(field web "$line")"
    echo "export YARN_AM_HDFS=$(field hdfs "$line")"
    echo "export YARN_AM_NM_NODES=$nodes"
    echo "export YARN_AM_NM_LOG_DIRS=$logs"
    echo "export YARN_AM_NM_LOCAL_DIRS=$locals"
    if [[ -n "$(field realm "$line")" ]]; then
      echo "export YARN_AM_SECURE=1"
      echo "export YARN_AM_RPC_PROTECTION=$(field rpcprotection "$line")"
      echo "export YARN_AM_KERBEROS_REALM=$(field realm "$line")"
      echo "export YARN_AM_KDC=$(field kdc "$line")"
      echo "export YARN_AM_TEST_PRINCIPAL=$(field principal "$line")"
      echo "export YARN_AM_TEST_KEYTAB=$(field keytab "$line")"
      echo "export KRB5_CONFIG=$(field krb5conf "$line")"
      echo "export KRB5CCNAME=$KERBEROS/krb5cc_test"
    fi
  } >"$EXPORT/env.tmp"
  mv "$EXPORT/env.tmp" "$EXPORT/env"
}

export HADOOP_USER_NAME="${HADOOP_USER_NAME:-root}"
cd "$WORK"
# The harness's stdout goes through the reader below (which spots the ready line); its log (stderr)
# goes straight to the container's stderr.
# shellcheck disable=SC2086
java ${MINICLUSTER_JAVA_OPTS:--Xmx2g} "${java17_opts[@]}" \
  -cp "$jvm_site$HOME_DIR/classes:$(cat "$HOME_DIR/classpath.txt")" yarnam.minicluster.Main \
  --conf-dir "$CONF" --work-dir "$WORK" "${defaults[@]}" "$@" \
  > >(while IFS= read -r line; do
    printf '%s\n' "$line"
    if [[ "$line" == "MINICLUSTER READY "* ]]; then
      write_env "$line"
      echo "yarn-am-minicluster: environment for a host client: source $EXPORT/env"
    fi
  done) &
pid=$!
# Forward a stop to the harness, which stops YARN, then HDFS; this shell stays to reap the
# containers the NodeManagers leave behind (it is PID 1 without --init).
trap 'kill -TERM "$pid" 2>/dev/null || true' TERM INT
rc=0
while :; do
  # wait returns early (> 128) when a signal arrives; the harness is then still stopping.
  wait "$pid" && rc=0 || rc=$?
  kill -0 "$pid" 2>/dev/null || break
done
rm -f "$EXPORT/env"
exit "$rc"
