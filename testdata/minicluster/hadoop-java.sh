#!/usr/bin/env bash
# Runs a Java main against the mini cluster: the harness's jars of the cluster's Hadoop version,
# $HADOOP_CONF_DIR first on the classpath, and the Java 17 --add-opens flags. Source .minicluster/env
# first. Example:
#   "$YARN_AM_HADOOP_JAVA" org.apache.hadoop.yarn.applications.distributedshell.Client \
#     -jar "$YARN_AM_DSHELL_JAR" -shell_command hostname -num_containers 2
exec "$(dirname "${BASH_SOURCE[0]}")/minicluster.sh" java "$@"
