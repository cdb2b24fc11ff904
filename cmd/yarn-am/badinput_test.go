package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// badInput is one wrong input a new user could give. The command must fail with code, before any
// network use, and its message must contain every string of want (the key, flag or variable, the
// value, and what would be valid). docs/running.md has the exit-code table.
type badInput struct {
	name  string
	args  []string          // "$D" is the test's directory
	job   string            // content of $D/job.toml; "" = okJob
	files map[string]string // more files under $D; a name ending in "/" is a directory, in "|" a named pipe, in "@" a symbolic link to the content
	env   map[string]string // overrides of the environment ("" unsets)
	code  int
	want  []string // in stderr (stdout when code is 0)
	not   []string // must not be in stderr: Go internals
	once  string   // must appear exactly once in stderr
	// inert: the whole message holds no raw control byte (but newline and tab) and is at most 9 KiB,
	// however long and hostile the value (issue 33 §2).
	inert bool
}

const okJob = `name = "ok"
[taskexecutor]
command = "./worker"
`

const gpuBadJob = `name = "ok"
external-resources = "gpu"
external-resource.gpu.amount = 1
external-resource.gpu.yarn.config-key = "yarn.io/gpu"
[taskexecutor]
command = "./worker"
`

// flinkJob is a [flink] job whose Flink comes from HDFS, so check needs no Flink home.
const flinkJob = `name = "f"
[flink]
provided = "hdfs:///flink/flink-1.20.5.tar"
jar = "hdfs:///jobs/wordcount.jar"
[taskexecutor]
instances = 1
`

// flink2Job is a [flink] job on a Flink 2.3.0 home of the test's directory (flink2Home), with
// [flink.config] extra.
func flink2Job(extra string) string {
	return "name = \"f\"\n[taskexecutor]\ninstances = 1\nmemory = 2048\n[flink]\nhome = \"flink\"\n[flink.config]\n" + extra
}

// flink2Home is the files of a Flink 2.3.0 home's layout (the jars empty: check reads no class) with
// conf files; nil is a conf/config.yaml of one plain key.
func flink2Home(conf map[string]string) map[string]string {
	files := map[string]string{"flink/lib/flink-dist-2.3.0.jar": "", "flink/bin/bash-java-utils.jar": "", "flink/plugins/": ""}
	if conf == nil {
		conf = map[string]string{"config.yaml": "parallelism.default: 1\n"}
	}
	for name, content := range conf {
		files["flink/conf/"+name] = content
	}
	return files
}

// localJarFlinkJob is flinkJob with its jar beside the job file, so check goes on to Flink's keys.
var localJarFlinkJob = strings.Replace(flinkJob, "hdfs:///jobs/wordcount.jar", "job.jar", 1)

// withJavaHome is flinkJob with [flink] java-home = v.
func withJavaHome(v string) string {
	return strings.Replace(flinkJob, "jar = ", fmt.Sprintf("java-home = %q\njar = ", v), 1)
}

// manyUnknownKeys is n unknown top-level keys, for the start of a job file.
func manyUnknownKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%d = 1\n", i)
	}
	return b.String()
}

// manyDefines is YARN_AM_DEFINES of n overrides made from format and their index.
func manyDefines(n int, format string) string {
	d := make([]string, n)
	for i := range d {
		d[i] = fmt.Sprintf(format, i)
	}
	return contract.EncodeDefines(d)
}

// manyFlags is n -D flags made from format and their index.
func manyFlags(n int, format string) []string {
	var args []string
	for i := range n {
		args = append(args, "-D", fmt.Sprintf(format, i))
	}
	return args
}

// kerberized is the files of a Kerberized cluster's configuration in $D/conf (its RM the test's
// listener, $RM: the login fails first) and a krb5.conf in $D, with more files.
func kerberized(more map[string]string) map[string]string {
	site := `<configuration>
<property><name>hadoop.security.authentication</name><value>kerberos</value></property>
<property><name>yarn.resourcemanager.address</name><value>$RM</value></property>
</configuration>`
	files := map[string]string{"conf/core-site.xml": site, "conf/yarn-site.xml": site,
		"krb5.conf": "[libdefaults]\n default_realm = EXAMPLE.COM\n"}
	for name, content := range more {
		files[name] = content
	}
	return files
}

// goInternals are fragments of Go's own error texts that mean nothing to a user.
var goInternals = []string{"[]any", "[]interface", "destination has type", "map[string]", ": toml: ", "yaml: unmarshal", "strconv.", "time: invalid duration", "flag provided but not defined"}

func badInputs() []badInput {
	job := func(extra string) string { return okJob + extra }
	elevenTags := `tags = ["a","b","c","d","e","f","g","h","i","j","k"]` + "\n"
	return []badInput{
		// --- the job file: syntax, types, sizes ---
		{name: "toml syntax error reported once", args: []string{"check", "$D/job.toml"}, job: "name = \n[taskexecutor]\ncommand = \"x\"\n",
			code: 3, want: []string{"job.toml", "line 1"}, once: "TOML"},
		{name: "every type error at once", args: []string{"check", "$D/job.toml"}, job: "priority = \"high\"\nmax-attempts = \"x\"\n" + okJob[len(`name = "ok"`)+1:],
			code: 3, want: []string{"priority", `"high"`, "max-attempts", `"x"`, "integer"}},
		{name: "tags a string", args: []string{"check", "$D/job.toml"}, job: `tags = "a,b"` + "\n" + okJob[len(`name = "ok"`)+1:],
			code: 3, want: []string{"tags", `"a,b"`, "list of strings"}},
		{name: "command a number", args: []string{"check", "$D/job.toml"}, job: "[taskexecutor]\ncommand = 5\n",
			code: 3, want: []string{"taskexecutor.command", "5", "string"}},
		{name: "memory fractional", args: []string{"check", "$D/job.toml"}, job: job("memory = 1.5\n"),
			code: 3, want: []string{"taskexecutor.memory", "1.5", "whole number"}},
		{name: "memory 1e30g", args: []string{"check", "$D/job.toml"}, job: job(`memory = "1e30g"` + "\n"),
			code: 3, want: []string{"taskexecutor.memory", "1e30g", "too large", "maximum"}},
		{name: "memory NaN", args: []string{"check", "$D/job.toml"}, job: job(`memory = "NaN"` + "\n"),
			code: 3, want: []string{"taskexecutor.memory", "NaN", "not a memory size"}},
		{name: "memory inf", args: []string{"check", "$D/job.toml"}, job: job(`memory = "inf"` + "\n"),
			code: 3, want: []string{"taskexecutor.memory", "inf", "not a memory size"}},
		{name: "memory fractional MiB string", args: []string{"check", "$D/job.toml"}, job: job(`memory = "1.5m"` + "\n"),
			code: 3, want: []string{"taskexecutor.memory", "1.5m", "whole number"}},
		{name: "memory negative", args: []string{"check", "$D/job.toml"}, job: job("memory = -5\n"),
			code: 3, want: []string{"taskexecutor.memory", "-5", "positive"}},
		{name: "am memory a bool", args: []string{"check", "$D/job.toml"}, job: okJob + "[am]\nmemory = true\n",
			code: 3, want: []string{"am.memory", "true", "number of MiB"}},
		{name: "am files missing", args: []string{"check", "$D/job.toml"}, job: okJob + "[am]\nfiles = [\"driver.sh\"]\n",
			code: 3, want: []string{"am.files", `"driver.sh" does not exist`, "job file's directory"}},
		{name: "am env reserved", args: []string{"check", "$D/job.toml"}, job: okJob + "[am.env]\nHADOOP_USER_NAME = \"bob\"\n",
			code: 3, want: []string{"am.env", "HADOOP_USER_NAME is reserved"}},
		{name: "visibility unknown", args: []string{"check", "$D/job.toml"}, job: job(`visibility = "everyone"` + "\n"),
			code: 3, want: []string{"taskexecutor.visibility", `"everyone"`, `"private"`, `"application"`, `"public"`}},
		{name: "public with a local file", args: []string{"check", "$D/job.toml"}, job: job(`files = ["w.txt"]` + "\n" + `visibility = "public"` + "\n"),
			files: map[string]string{"w.txt": "x"}, code: 3, want: []string{`taskexecutor.visibility = "public"`, "w.txt", "local file", `"private"`}},
		{name: "vcores a string", args: []string{"check", "$D/job.toml"}, job: okJob + "[am]\nvcores = \"2\"\n",
			code: 3, want: []string{"am.vcores", `"2"`, "integer"}},
		{name: "instances fractional", args: []string{"check", "$D/job.toml"}, job: job("instances = 1.5\n"),
			code: 3, want: []string{"taskexecutor.instances", "1.5", "integer"}},
		{name: "env value a number", args: []string{"check", "$D/job.toml"}, job: job("env = {A = 1}\n"),
			code: 3, want: []string{"taskexecutor.env.A", "1", "string"}},
		{name: "taskexecutor a string", args: []string{"check", "$D/job.toml"}, job: "taskexecutor = \"x\"\n",
			code: 3, want: []string{"taskexecutor", `"x"`, "table"}},
		{name: "unknown key with did-you-mean", args: []string{"check", "$D/job.toml"}, job: `nmae = "x"` + "\n" + okJob,
			code: 3, want: []string{"nmae", `did you mean "name"`}},
		{name: "unknown taskexecutor key", args: []string{"check", "$D/job.toml"}, job: job("comand = \"x\"\n"),
			code: 3, want: []string{"taskexecutor.comand", `did you mean "taskexecutor.command"`}},

		{name: "job file missing", args: []string{"check", "$D/nope.toml"},
			code: 3, want: []string{"nope.toml", "does not exist"}},
		{name: "job file a directory", args: []string{"check", "$D/sub"}, files: map[string]string{"sub/": ""},
			code: 3, want: []string{"sub", "directory"}},
		// --- the job file and the Flink configuration: what is not a file, too large, too deep
		// (docs/running.md#limits-on-input-files) ---
		{name: "job file a named pipe", args: []string{"check", "$D/pipe"}, files: map[string]string{"pipe|": ""},
			code: 3, want: []string{"job file $D/pipe", "named pipe", "not a regular file"}},
		{name: "job file /dev/zero", args: []string{"check", "/dev/zero"},
			code: 3, want: []string{"job file /dev/zero", "a device", "not a regular file"}},
		{name: "job file over 1 MiB", args: []string{"check", "$D/job.toml"}, job: okJob + "# " + strings.Repeat("x", 1<<20) + "\n",
			code: 3, want: []string{"job file $D/job.toml", "larger than 1 MiB"}},
		{name: "job file arrays 2,000,000 deep", args: []string{"check", "$D/job.toml"}, job: "x = " + strings.Repeat("[", 2000000) + strings.Repeat("]", 2000000) + "\n",
			code: 3, want: []string{"job file $D/job.toml", "larger than 1 MiB"}},
		{name: "job file arrays 400,000 deep", args: []string{"check", "$D/job.toml"}, job: "x = " + strings.Repeat("[", 400000) + strings.Repeat("]", 400000) + "\n",
			code: 3, want: []string{"job file $D/job.toml", "line 1", "nested more than 32 deep"}},
		{name: "job file inline tables 200,000 deep", args: []string{"check", "$D/job.toml"}, job: "x = " + strings.Repeat("{a=", 200000) + "1" + strings.Repeat("}", 200000) + "\n",
			code: 3, want: []string{"job file $D/job.toml", "line 1", "nested more than 32 deep"}},
		{name: "job file header of 20,000 dotted parts", args: []string{"check", "$D/job.toml"}, job: okJob + "[" + strings.Repeat("a.", 19999) + "a]\n",
			code: 3, want: []string{"job file $D/job.toml", "line 4", "more than 32 dotted parts"}},
		{name: "job file of 20,000 keys", args: []string{"check", "$D/job.toml"}, job: okJob + strings.Repeat("[taskexecutor.env]\n", 20000),
			code: 3, want: []string{"job file $D/job.toml", "more than 10000 keys"}},
		{name: "flink-conf a named pipe", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/fc"}, files: map[string]string{"fc|": ""},
			code: 3, want: []string{"flink-conf file", "$D/fc", "named pipe", "not a regular file"}},
		{name: "flink-conf /dev/zero", args: []string{"check", "$D/job.toml", "--flink-conf", "/dev/zero"},
			code: 3, want: []string{"flink-conf file /dev/zero", "a device", "not a regular file"}},
		{name: "flink-conf over 1 MiB", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/flink-conf.yaml"},
			files: map[string]string{"flink-conf.yaml": "# " + strings.Repeat("x", 1<<20) + "\n"},
			code:  3, want: []string{"flink-conf file $D/flink-conf.yaml", "larger than 1 MiB"}},
		{name: "command empty", args: []string{"check", "$D/job.toml"}, job: "[taskexecutor]\ncommand = \"  \"\n",
			code: 3, want: []string{"taskexecutor.command", "give the command"}},
		{name: "priority fractional", args: []string{"check", "$D/job.toml"}, job: "priority = 1.5\n" + okJob,
			code: 3, want: []string{"priority = 1.5", "integer"}},
		{name: "max-attempts zero", args: []string{"check", "$D/job.toml"}, job: "max-attempts = 0\n" + okJob,
			code: 3, want: []string{"max-attempts = 0", "from 1 to 100"}},
		{name: "tags of numbers", args: []string{"check", "$D/job.toml"}, job: "tags = [1, 2]\n" + okJob,
			code: 3, want: []string{"tags", "1", "list of strings"}},
		{name: "files a string", args: []string{"check", "$D/job.toml"}, job: job(`files = "w.bin"` + "\n"),
			code: 3, want: []string{"taskexecutor.files", `"w.bin"`, "list of strings"}},
		{name: "flink-conf key a number", args: []string{"check", "$D/job.toml"}, job: "flink-conf = 5\n" + okJob,
			code: 3, want: []string{"flink-conf = 5", "path"}, once: "flink-conf = 5"},
		{name: "hdfs-namenodes not a URI", args: []string{"check", "$D/job.toml"}, job: `hdfs-namenodes = ["nn2"]` + "\n" + okJob,
			code: 3, want: []string{"hdfs-namenodes", "nn2", "hdfs://"}},
		{name: "external-resources a number", args: []string{"check", "$D/job.toml"}, job: "external-resources = 5\n" + okJob,
			code: 3, want: []string{"external-resources = 5", "resource names separated by ';'"}},
		{name: "amount a list", args: []string{"check", "$D/job.toml"}, job: strings.Replace(gpuBadJob, "amount = 1", "amount = [1, 2]", 1),
			code: 3, want: []string{"external-resource.gpu.amount", "whole number"}},
		{name: "flink-conf given a job file", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/job.toml"},
			code: 3, want: []string{"job.toml:1", "key: value"}},

		// --- files and archives ---
		{name: "files: a directory", args: []string{"check", "$D/job.toml"}, job: job(`files = ["data"]` + "\n"), files: map[string]string{"data/": ""},
			code: 3, want: []string{"taskexecutor.files", "data", "directory", "archives"}},
		{name: "files: hdfs URI without a path", args: []string{"check", "$D/job.toml"}, job: job(`files = ["hdfs://nn:8020"]` + "\n"),
			code: 3, want: []string{"taskexecutor.files", "hdfs://nn:8020", "no path"}},
		{name: "files: hdfs URI of the root", args: []string{"check", "$D/job.toml"}, job: job(`files = ["hdfs://nn:8020/"]` + "\n"),
			code: 3, want: []string{"taskexecutor.files", "hdfs://nn:8020/", "no path"}},
		{name: "files: missing local file", args: []string{"check", "$D/job.toml"}, job: job(`files = ["nope.bin"]` + "\n"),
			code: 3, want: []string{"taskexecutor.files", "nope.bin", "does not exist"}},
		{name: "files: unsupported scheme", args: []string{"check", "$D/job.toml"}, job: job(`files = ["s3://b/k"]` + "\n"),
			code: 3, want: []string{"taskexecutor.files", "s3://b/k", "hdfs://"}},
		{name: "alias job.toml reserved", args: []string{"check", "$D/job.toml"}, job: job(`files = ["w.bin#job.toml"]` + "\n"), files: map[string]string{"w.bin": "x"},
			code: 3, want: []string{"taskexecutor.files", `"job.toml"`, "reserved"}},
		{name: "alias yarn-am reserved", args: []string{"check", "$D/job.toml"}, job: job(`files = ["yarn-am"]` + "\n"), files: map[string]string{"yarn-am": "x"},
			code: 3, want: []string{"taskexecutor.files", `"yarn-am"`, "reserved"}},
		{name: "alias launch_container.sh reserved", args: []string{"check", "$D/job.toml"}, job: job(`files = ["w.bin#launch_container.sh"]` + "\n"), files: map[string]string{"w.bin": "x"},
			code: 3, want: []string{"launch_container.sh", "reserved", "YARN"}},
		{name: "alias container_tokens reserved", args: []string{"check", "$D/job.toml"}, job: job(`archives = ["w.zip#container_tokens"]` + "\n"), files: map[string]string{"w.zip": "x"},
			code: 3, want: []string{"taskexecutor.archives", "container_tokens", "reserved"}},
		{name: "alias manifest.json reserved", args: []string{"check", "$D/job.toml"}, job: job(`files = ["w.bin#manifest.json"]` + "\n"), files: map[string]string{"w.bin": "x"},
			code: 3, want: []string{"manifest.json", "reserved"}},
		{name: "alias external-resources.json reserved", args: []string{"check", "$D/job.toml"}, job: job(`files = ["w.bin#external-resources.json"]` + "\n"), files: map[string]string{"w.bin": "x"},
			code: 3, want: []string{"external-resources.json", "reserved"}},
		{name: "files entry a named pipe", args: []string{"check", "$D/job.toml"}, job: job(`files = ["pipe"]` + "\n"), files: map[string]string{"pipe|": ""},
			code: 3, want: []string{"taskexecutor.files", `"pipe"`, "a named pipe, not a regular file"}},
		{name: "files entry /dev/zero", args: []string{"check", "$D/job.toml"}, job: job(`files = ["/dev/zero"]` + "\n"),
			code: 3, want: []string{"taskexecutor.files", `"/dev/zero"`, "a device, not a regular file"}},
		{name: "yarn-site.xml a named pipe", args: []string{"check", "$D/job.toml"}, env: map[string]string{"HADOOP_CONF_DIR": "$D/conf"},
			files: map[string]string{"conf/yarn-site.xml|": ""}, code: 3, want: []string{"$D/conf/yarn-site.xml", "named pipe", "not a regular file"}},
		{name: "alias core-site.xml reserved", args: []string{"check", "$D/job.toml"}, job: job(`files = ["core-site.xml"]` + "\n"), files: map[string]string{"core-site.xml": "x"},
			code: 3, want: []string{"core-site.xml", "reserved"}},
		{name: "alias keytab reserved", args: []string{"check", "$D/job.toml"}, job: job(`files = ["k#yarn-am.keytab"]` + "\n"), files: map[string]string{"k": "x"},
			code: 3, want: []string{"yarn-am.keytab", "reserved"}},
		{name: "alias with #", args: []string{"check", "$D/job.toml"}, job: job(`files = ["w.bin#a#b"]` + "\n"), files: map[string]string{"w.bin": "x"},
			code: 3, want: []string{"taskexecutor.files", "a#b", "'#'"}},
		{name: "a script under archives", args: []string{"check", "$D/job.toml"}, job: job(`archives = ["run.sh"]` + "\n"), files: map[string]string{"run.sh": "echo"},
			code: 3, want: []string{"taskexecutor.archives", "run.sh", ".tar.gz", "files"}},

		// --- environment names ---
		{name: "env CUDA_VISIBLE_DEVICES with a GPU", args: []string{"check", "$D/job.toml"}, job: gpuBadJob + "env = {CUDA_VISIBLE_DEVICES = \"0\"}\n",
			code: 3, want: []string{"taskexecutor.env", "CUDA_VISIBLE_DEVICES", "reserved", "GPU"}},
		{name: "env HIP_VISIBLE_DEVICES with a GPU", args: []string{"check", "$D/job.toml"}, job: gpuBadJob + "env = {HIP_VISIBLE_DEVICES = \"0\"}\n",
			code: 3, want: []string{"taskexecutor.env", "HIP_VISIBLE_DEVICES", "reserved"}},
		{name: "env CONTAINER_ID", args: []string{"check", "$D/job.toml"}, job: job("env = {CONTAINER_ID = \"x\"}\n"),
			code: 3, want: []string{"taskexecutor.env", "CONTAINER_ID", "reserved", "YARN"}},
		{name: "env NM_HOST", args: []string{"check", "$D/job.toml"}, job: job("env = {NM_HOST = \"x\"}\n"),
			code: 3, want: []string{"NM_HOST", "reserved"}},
		{name: "env HADOOP_TOKEN_FILE_LOCATION", args: []string{"check", "$D/job.toml"}, job: job("env = {HADOOP_TOKEN_FILE_LOCATION = \"x\"}\n"),
			code: 3, want: []string{"HADOOP_TOKEN_FILE_LOCATION", "reserved"}},
		{name: "env LOCAL_DIRS", args: []string{"check", "$D/job.toml"}, job: job("env = {LOCAL_DIRS = \"x\"}\n"),
			code: 3, want: []string{"LOCAL_DIRS", "reserved"}},
		{name: "env YARN_AM_ prefix", args: []string{"check", "$D/job.toml"}, job: job("env = {YARN_AM_REPORT_URL = \"x\"}\n"),
			code: 3, want: []string{"YARN_AM_REPORT_URL", "reserved", "YARN_AM_"}},
		{name: "env bad name", args: []string{"check", "$D/job.toml"}, job: job("env = {\"1A\" = \"x\"}\n"),
			code: 3, want: []string{"taskexecutor.env", "1A", "not a valid environment variable name"}},

		// --- tags, name, queue ---
		{name: "eleven tags", args: []string{"check", "$D/job.toml"}, job: elevenTags + okJob,
			code: 3, want: []string{"tags", "11", "at most 9"}},
		{name: "tag too long", args: []string{"check", "$D/job.toml"}, job: `tags = ["` + strings.Repeat("t", 101) + `"]` + "\n" + okJob,
			code: 3, want: []string{"tags", "101", "at most 100"}},
		{name: "tag not ASCII", args: []string{"check", "$D/job.toml"}, job: `tags = ["gpü"]` + "\n" + okJob,
			code: 3, want: []string{"tags", "gpü", "ASCII"}},
		{name: "bad name in job", args: []string{"check", "$D/job.toml"}, job: `name = "a b"` + "\n[taskexecutor]\ncommand = \"x\"\n",
			code: 3, want: []string{"name", `"a b"`, "letters"}},
		{name: "check --name invalid", args: []string{"check", "$D/job.toml", "--name", "a b"},
			code: 3, want: []string{"--name", `"a b"`, "letters"}},
		{name: "check --queue empty", args: []string{"check", "$D/job.toml", "--queue", ""},
			code: 3, want: []string{"--queue", "empty"}},
		{name: "submit --name invalid", args: []string{"submit", "$D/job.toml", "--name", "x/y"},
			code: 3, want: []string{"--name", `"x/y"`, "letters"}},
		{name: "submit a bad job", args: []string{"submit", "$D/job.toml"}, job: job("memory = \"lots\"\n"),
			code: 3, want: []string{"taskexecutor.memory", "lots", "not a memory size"}},

		// --- external-resource keys in the job file ---
		{name: "resources separated by commas", args: []string{"check", "$D/job.toml"}, job: `external-resources = "gpu,fpga"` + "\n" + okJob,
			code: 3, want: []string{"external-resources", "gpu,fpga", "';'"}},
		{name: "resources separated by spaces", args: []string{"check", "$D/job.toml"}, job: `external-resources = "gpu fpga"` + "\n" + okJob,
			code: 3, want: []string{"external-resources", "gpu fpga", "';'"}},
		{name: "resource amount not a number", args: []string{"check", "$D/job.toml"}, job: strings.Replace(gpuBadJob, "amount = 1", `amount = "two"`, 1),
			code: 3, want: []string{"external-resource.gpu.amount", "two", "whole number"}},
		{name: "policy typo", args: []string{"check", "$D/job.toml"}, job: okJob + "[policy]\nmax-failure-rat = 3\n",
			code: 3, want: []string{"max-failure-rat", "max-failure-rate"}},

		// --- -D ---
		{name: "-D typo in the prefix", args: []string{"check", "$D/job.toml", "-D", "extrenal-resource.gpu.amount=4"},
			code: 3, want: []string{"-D", "extrenal-resource.gpu.amount", `did you mean`}},
		{name: "-D a key of no external resource", args: []string{"check", "$D/job.toml", "-D", "taskmanager.memory.process.size=4g"},
			code: 3, want: []string{"-D", "taskmanager.memory.process.size", "external-resource"}},
		{name: "-D typo in the sub-key", args: []string{"check", "$D/job.toml", "-Dexternal-resource.gpu.amout=4"}, job: gpuBadJob,
			code: 3, want: []string{"external-resource.gpu.amout", `did you mean`}},
		{name: "-D without =", args: []string{"check", "$D/job.toml", "-D", "external-resources"},
			code: 2, want: []string{"-D", "external-resources", "key=value"}},
		{name: "-D empty key", args: []string{"check", "$D/job.toml", "-D", "=4"},
			code: 2, want: []string{"-D", `"=4"`, "key=value"}},
		{name: "discover -D typo", args: []string{"discover", "-D", "external-resource.gpu.amuont=1", "-D", "external-resources=gpu"},
			code: 3, want: []string{"amuont", "did you mean"}},

		// --- flink-conf ---
		{name: "flink-conf key:value without a space", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/flink-conf.yaml"},
			files: map[string]string{"flink-conf.yaml": "external-resources:gpu\nexternal-resource.gpu.amount:2\n"},
			code:  3, want: []string{"flink-conf.yaml:1", "external-resources:gpu", "space after"}},
		{name: "flink-conf a line without a colon", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/flink-conf.yaml"},
			files: map[string]string{"flink-conf.yaml": "external-resources: gpu\nexternal-resource.gpu.amount 2\n"},
			code:  3, want: []string{"flink-conf.yaml:2", "external-resource.gpu.amount 2", "key: value"}},
		{name: "flink-conf a key without a value", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/flink-conf.yaml"},
			files: map[string]string{"flink-conf.yaml": "external-resources: gpu\nexternal-resource.gpu.amount: \n"},
			code:  3, want: []string{"flink-conf.yaml:2", "external-resource.gpu.amount", "no value"}},
		{name: "config.yaml with a second document", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/config.yaml"},
			files: map[string]string{"config.yaml": "external-resources: gpu\n---\nexternal-resource:\n  gpu:\n    amount: 2\n"},
			code:  3, want: []string{"config.yaml:3", "second YAML document"}},
		{name: "config.yaml not YAML", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/config.yaml"},
			files: map[string]string{"config.yaml": "external-resource:\n  gpu:\n amount: [2\n"},
			code:  3, want: []string{"config.yaml:2", "YAML"}},
		{name: "config.yaml a list", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/config.yaml"},
			files: map[string]string{"config.yaml": "- external-resources\n"},
			code:  3, want: []string{"config.yaml:1", "mapping"}},
		{name: "flink-conf missing", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/nope.yaml"},
			code: 3, want: []string{"flink-conf", "nope.yaml", "does not exist"}},
		{name: "flink-conf a directory", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/fc"}, files: map[string]string{"fc/": ""},
			code: 3, want: []string{"flink-conf", "fc", "directory"}},
		{name: "flink-conf key typo", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/flink-conf.yaml"},
			files: map[string]string{"flink-conf.yaml": "external-resources: gpu\nexternal-resource.gpu.amonut: 2\n"},
			code:  3, want: []string{"external-resource.gpu.amonut", "did you mean"}},

		// --- flags and arguments of every command ---
		{name: "submit --service --driver", args: []string{"submit", "$D/job.toml", "--service", "--driver", "./d"},
			code: 2, want: []string{"--service", "--driver"}},
		{name: "cluster extra argument", args: []string{"cluster", "extra", "--timeout", "5s"},
			code: 2, want: []string{"cluster", `"extra"`}},
		{name: "cluster unknown flag", args: []string{"cluster", "--bogus"},
			code: 2, want: []string{"--bogus", "yarn-am help cluster"}},
		{name: "version --bogus", args: []string{"version", "--bogus"},
			code: 2, want: []string{"version", "--bogus"}},
		{name: "version extra", args: []string{"version", "extra"},
			code: 2, want: []string{"version", `"extra"`}},
		{name: "help check extra", args: []string{"help", "check", "extra"},
			code: 2, want: []string{"help", `"extra"`}},
		{name: "help unknown command", args: []string{"help", "chek"},
			code: 2, want: []string{`"chek"`, `did you mean "check"`}},
		{name: "unknown command", args: []string{"sumbit"},
			code: 2, want: []string{`"sumbit"`, `did you mean "submit"`}},
		{name: "list extra", args: []string{"list", "extra"},
			code: 2, want: []string{"list", `"extra"`}},
		{name: "status without an id", args: []string{"status"},
			code: 2, want: []string{"status", "application id"}},
		{name: "status two ids", args: []string{"status", "application_1_0001", "application_1_0002"},
			code: 2, want: []string{"status", "one application id"}},
		{name: "status a bad id", args: []string{"status", "app-1"},
			code: 2, want: []string{"app-1", "application_"}},
		{name: "kill extra", args: []string{"kill", "application_1_0001", "now"},
			code: 2, want: []string{"kill", "one application id"}},
		{name: "check without a job", args: []string{"check"},
			code: 2, want: []string{"check", "one job file"}},
		{name: "check two jobs", args: []string{"check", "$D/job.toml", "$D/job.toml"},
			code: 2, want: []string{"check", "one job file"}},
		{name: "discover extra", args: []string{"discover", "extra"},
			code: 2, want: []string{"discover", `"extra"`}},
		{name: "am extra", args: []string{"am", "--job", "$D/job.toml", "extra"},
			code: 2, want: []string{"am", `"extra"`}},
		{name: "launch unknown flag", args: []string{"launch", "--bogus", "--", "true"},
			code: 91, want: []string{"launch", "unknown flag --bogus"}},
		{name: "launch without a command", args: []string{"launch", "-D", "external-resources=none"},
			code: 91, want: []string{"launch", "no worker command", "-- CMD"}},
		// Every problem list is capped as check's is (text.MaxListed), whichever command prints it: 20,001
		// bad overrides used to print 2.5 MB (issue 40 §7).
		{name: "launch 20,001 bad YARN_AM_DEFINES", args: []string{"launch", "--", "true"}, env: map[string]string{"YARN_AM_DEFINES": manyDefines(20001, "e%d=1")},
			code: 91, want: []string{"20001 problems", "-D e0: not an external-resource key", "-D e19:", "and 19981 more"}, not: []string{"-D e20:"}, inert: true},
		{name: "discover 20,001 bad -D", args: append([]string{"discover"}, manyFlags(20001, "e%d=1")...),
			code: 3, want: []string{"yarn-am discover", "20001 problems", "-D e19:", "and 19981 more"}, not: []string{"-D e20:"}, inert: true},
		{name: "launch -D typo", args: []string{"launch", "-D", "extrenal-resources=none", "--", "true"},
			code: 91, want: []string{"extrenal-resources", "did you mean"}},
		{name: "--timeout without a unit", args: []string{"check", "$D/job.toml", "--timeout", "5"},
			code: 2, want: []string{"--timeout", `"5"`, "unit", "5s"}},
		{name: "--timeout negative", args: []string{"list", "--timeout", "-5s"},
			code: 2, want: []string{"--timeout", "-5s", "positive"}},
		{name: "--timeout zero", args: []string{"cluster", "--timeout", "0s"},
			code: 2, want: []string{"--timeout", "0s", "positive"}},
		{name: "--timeout garbage", args: []string{"kill", "application_1_0001", "--timeout", "soon"},
			code: 2, want: []string{"--timeout", `"soon"`, "5s"}},
		{name: "submit --driver empty", args: []string{"submit", "$D/job.toml", "--driver", " "},
			code: 2, want: []string{"--driver", "shell command"}},
		{name: "status --json with an extra argument", args: []string{"status", "--json", "application_1_0001", "x"},
			code: 2, want: []string{"status", "one application id"}},
		{name: "-D resources separated by commas", args: []string{"check", "$D/job.toml", "-D", "external-resources=gpu,fpga"},
			code: 3, want: []string{"external-resources", "gpu,fpga", "';'"}},
		{name: "--flink-conf without a value", args: []string{"check", "$D/job.toml", "--flink-conf"},
			code: 2, want: []string{"--flink-conf", "needs a value"}},
		{name: "--json=maybe", args: []string{"list", "--json=maybe"},
			code: 2, want: []string{"--json", `"maybe"`, "true or false"}},
		{name: "--keytab without --principal", args: []string{"list", "--keytab", "$D/k"},
			code: 2, want: []string{"--keytab", "--principal"}},

		// --- local Kerberos files on a Kerberized cluster: bad input (3), not an unreachable cluster
		// (4); the file's path is named (issue 40 §7) ---
		{name: "KRB5_CONFIG a missing file", args: []string{"list"}, files: kerberized(nil),
			env:  map[string]string{"HADOOP_CONF_DIR": "$D/conf", "KRB5_CONFIG": "$D/no-krb5.conf"},
			code: 3, want: []string{"KRB5_CONFIG", "$D/no-krb5.conf", "no such file"}},
		{name: "KRB5_CONFIG a loop of links", args: []string{"check", "$D/job.toml"}, files: kerberized(map[string]string{"a@": "b", "b@": "a"}),
			env:  map[string]string{"HADOOP_CONF_DIR": "$D/conf", "KRB5_CONFIG": "$D/a"},
			code: 3, want: []string{"KRB5_CONFIG", "$D/a", "symbolic links"}},
		{name: "--keytab a missing file", args: []string{"list", "--principal", "alice@EXAMPLE.COM", "--keytab", "$D/no.keytab"}, files: kerberized(nil),
			env:  map[string]string{"HADOOP_CONF_DIR": "$D/conf", "KRB5_CONFIG": "$D/krb5.conf"},
			code: 3, want: []string{"--keytab", "$D/no.keytab", "no such file"}},
		{name: "--keytab a loop of links", args: []string{"submit", "$D/job.toml", "--principal", "alice@EXAMPLE.COM", "--keytab", "$D/k"},
			files: kerberized(map[string]string{"k@": "k"}), env: map[string]string{"HADOOP_CONF_DIR": "$D/conf", "KRB5_CONFIG": "$D/krb5.conf"},
			code: 3, want: []string{"--keytab", "$D/k", "symbolic links"}},
		{name: "--keytab a dangling link", args: []string{"cluster", "--principal", "alice@EXAMPLE.COM", "--keytab", "$D/k"},
			files: kerberized(map[string]string{"k@": "gone"}), env: map[string]string{"HADOOP_CONF_DIR": "$D/conf", "KRB5_CONFIG": "$D/krb5.conf"},
			code: 3, want: []string{"--keytab", "$D/k", "no such file"}},
		{name: "--keytab in a path through a file", args: []string{"list", "--principal", "alice@EXAMPLE.COM", "--keytab", "$D/krb5.conf/k"},
			files: kerberized(nil), env: map[string]string{"HADOOP_CONF_DIR": "$D/conf", "KRB5_CONFIG": "$D/krb5.conf"},
			code: 3, want: []string{"--keytab", "$D/krb5.conf/k", "not a directory"}},
		{name: "KRB5CCNAME a missing ticket cache", args: []string{"status", "application_1_0001"}, files: kerberized(nil),
			env:  map[string]string{"HADOOP_CONF_DIR": "$D/conf", "KRB5_CONFIG": "$D/krb5.conf", "KRB5CCNAME": "$D/no-cache"},
			code: 3, want: []string{"$D/no-cache", "does not exist", "kinit"}},

		// --- the environment ---
		{name: "-D a job value the file would refuse", args: []string{"check", "$D/job.toml", "-D", "taskexecutor.memory=lots"},
			code: 3, want: []string{"taskexecutor.memory", `"lots"`, "not a memory size"}},
		{name: "-D a job key typo", args: []string{"submit", "$D/job.toml", "-D", "taskexecutor.instance=4"},
			code: 3, want: []string{"-D taskexecutor.instance", `did you mean "taskexecutor.instances"`}},
		{name: "-D instances fractional", args: []string{"check", "$D/job.toml", "-Dtaskexecutor.instances=1.5"},
			code: 3, want: []string{"taskexecutor.instances", "1.5", "integer"}},
		{name: "am -D a job value the file would refuse", args: []string{"am", "--job", "$D/job.toml", "-D", "am.vcores=0"},
			code: 3, want: []string{"am.vcores", "0"}},
		{name: "flink-conf near miss of the prefix", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/flink-conf.yaml"},
			files: map[string]string{"flink-conf.yaml": "taskmanager.numberOfTaskSlots: 4\nextrenal-resource.gpu.param.vendor: amd\n"},
			code:  3, want: []string{"flink-conf.yaml:2", "extrenal-resource.gpu.param.vendor", `did you mean "external-resource.gpu.param.vendor"`}},
		{name: "flink-conf near miss of external-resources", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/flink-conf.yaml"},
			files: map[string]string{"flink-conf.yaml": "external-resourses: gpu\n"},
			code:  3, want: []string{"flink-conf.yaml:1", "external-resourses", `did you mean "external-resources"`}},
		{name: "config.yaml near miss, nested", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/config.yaml"},
			files: map[string]string{"config.yaml": "extrenal-resource:\n  gpu:\n    amount: 2\n"},
			code:  3, want: []string{"config.yaml:3", "extrenal-resource.gpu.amount", `did you mean "external-resource.gpu.amount"`}},
		{name: "job file near miss of the prefix", args: []string{"check", "$D/job.toml"}, job: "extrenal-resource.gpu.amount = 2\n" + okJob,
			code: 3, want: []string{"extrenal-resource", `did you mean "external-resource"?`}},
		{name: "launch flink-conf near miss", args: []string{"launch", "--flink-conf", "$D/flink-conf.yaml", "--", "true"},
			files: map[string]string{"flink-conf.yaml": "extrenal-resource.gpu.amount: 2\n"},
			code:  91, want: []string{"extrenal-resource.gpu.amount", "did you mean"}},
		{name: "[[taskexecutor]]", args: []string{"check", "$D/job.toml"}, job: "[[taskexecutor]]\ncommand = \"x\"\n",
			code: 3, want: []string{"[[taskexecutor]]", "array of tables", "[taskexecutor]"}, not: []string{"date/time"}},
		{name: "env a date", args: []string{"check", "$D/job.toml"}, job: job("env = {A = 1979-05-27}\n"),
			code: 3, want: []string{"taskexecutor.env.A", "1979-05-27", "a date/time"}},
		{name: "config.yaml indented with a tab", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/config.yaml"},
			files: map[string]string{"config.yaml": "external-resource:\n\tgpu:\n    amount: 2\n"},
			code:  3, want: []string{"config.yaml:2", "tab", "spaces"}, not: []string{"cannot start any token"}},
		{name: "config.yaml nested list", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/config.yaml"},
			files: map[string]string{"config.yaml": "external-resources: [gpu, [fpga]]\n"},
			code:  3, want: []string{"config.yaml:1", "external-resources", "flat list"}},
		{name: "am a bad job", args: []string{"am", "--job", "$D/job.toml"}, job: job("memory = \"lots\"\n"),
			code: 3, want: []string{"taskexecutor.memory", "lots", "not a memory size"}},
		{name: "am a bad -D", args: []string{"am", "--job", "$D/job.toml", "-D", "external-resources=gpu,fpga"},
			code: 3, want: []string{"external-resources", "gpu,fpga", "';'"}},
		{name: "am --launch-workers 0", args: []string{"am", "--job", "$D/job.toml", "--launch-workers", "0"},
			code: 2, want: []string{"--launch-workers=0", "from 1 to 1024"}},
		{name: "am --max-failure-rate -5", args: []string{"am", "--job", "$D/job.toml", "--max-failure-rate", "-5"},
			code: 2, want: []string{"--max-failure-rate=-5", "-1 (off)"}},
		{name: "am --pending-timeout 0s", args: []string{"am", "--job", "$D/job.toml", "--pending-timeout", "0s"},
			code: 2, want: []string{"--pending-timeout=0s", "positive duration"}},
		{name: "am --pending-timeout negative", args: []string{"am", "--job", "$D/job.toml", "--pending-timeout=-1m"},
			code: 2, want: []string{"--pending-timeout=-1m:", "positive duration"}},
		{name: "files: hdfs port out of range", args: []string{"check", "$D/job.toml"}, job: job(`files = ["hdfs://nn:99999/w.bin"]` + "\n"),
			code: 3, want: []string{"taskexecutor.files", "hdfs://nn:99999/w.bin", `"99999"`, "1-65535"}},
		{name: "hdfs-namenodes port out of range", args: []string{"check", "$D/job.toml"}, job: `hdfs-namenodes = ["hdfs://nn:99999"]` + "\n" + okJob,
			code: 3, want: []string{"hdfs-namenodes", "hdfs://nn:99999", "1-65535"}},
		{name: "command with a NUL byte", args: []string{"check", "$D/job.toml"}, job: "[taskexecutor]\ncommand = \"./w\\u0000x\"\n",
			code: 3, want: []string{"taskexecutor.command", `"./w\x00x"`, "NUL"}},
		{name: "env value with a NUL byte", args: []string{"check", "$D/job.toml"}, job: job(`env = {A = "x\u0000y"}` + "\n"),
			code: 3, want: []string{"taskexecutor.env.A", `"x\x00y"`, "NUL"}},
		{name: "alias with a newline", args: []string{"check", "$D/job.toml"}, job: job(`files = ["w.bin#a\nb"]` + "\n"), files: map[string]string{"w.bin": "x"},
			code: 3, want: []string{"taskexecutor.files", `"a\nb"`, "control character"}},
		{name: "HADOOP_USER_NAME a path", args: []string{"check", "$D/job.toml"}, env: map[string]string{"HADOOP_USER_NAME": "../../tmp"},
			code: 3, want: []string{"HADOOP_USER_NAME", `"../../tmp"`, "not a user name"}},
		{name: "HADOOP_USER_NAME with a newline", args: []string{"kill", "application_1_0001"}, env: map[string]string{"HADOOP_USER_NAME": "alice\nroot"},
			code: 3, want: []string{"HADOOP_USER_NAME", `"alice\nroot"`, "not a user name"}},
		{name: "HADOOP_USER_NAME with a space and a slash", args: []string{"submit", "$D/job.toml"}, env: map[string]string{"HADOOP_USER_NAME": "a b/c"},
			code: 3, want: []string{"HADOOP_USER_NAME", `"a b/c"`, "not a user name"}},
		{name: "HADOOP_USER_NAME of 1 MiB", args: []string{"list"}, env: map[string]string{"HADOOP_USER_NAME": strings.Repeat("a", 1<<20)},
			code: 3, want: []string{"HADOOP_USER_NAME", "(1048576 bytes)", "at most 256"}},
		{name: "HADOOP_USER_NAME for status", args: []string{"status", "application_1_0001"}, env: map[string]string{"HADOOP_USER_NAME": "-x"},
			code: 3, want: []string{"HADOOP_USER_NAME", `"-x"`}},
		{name: "YARN_AM_LOG_LEVEL=loud in the environment", args: []string{"check", "$D/job.toml"}, env: map[string]string{"YARN_AM_LOG_LEVEL": "loud"},
			code: 3, want: []string{"YARN_AM_LOG_LEVEL", `"loud"`, "debug, info, warn, error"}},
		{name: "YARN_AM_LOG_LEVEL=loud in the environment of submit", args: []string{"submit", "$D/job.toml"}, env: map[string]string{"YARN_AM_LOG_LEVEL": "loud"},
			code: 3, want: []string{"YARN_AM_LOG_LEVEL", `"loud"`, "debug, info, warn, error"}},
		{name: "YARN_AM_LOG_LEVEL=loud in taskexecutor.env", args: []string{"check", "$D/job.toml"}, job: job(`env = {YARN_AM_LOG_LEVEL = "loud"}` + "\n"),
			code: 3, want: []string{"taskexecutor.env", "YARN_AM_LOG_LEVEL", `"loud"`, "debug, info, warn, error"}},
		{name: "check --flink-conf empty", args: []string{"check", "$D/job.toml", "--flink-conf", ""},
			code: 2, want: []string{"--flink-conf", "empty"}},
		{name: "submit --flink-conf empty", args: []string{"submit", "$D/job.toml", "--flink-conf="},
			code: 2, want: []string{"--flink-conf", "empty"}},
		{name: "logs --file empty", args: []string{"logs", "application_1_0001", "--file", ""},
			code: 2, want: []string{`--file ""`, "empty; give a log file name"}},
		{name: "logs --container empty", args: []string{"logs", "application_1_0001", "--container="},
			code: 2, want: []string{`--container ""`, "empty; give a container id"}},
		{name: "discover --flink-conf empty", args: []string{"discover", "--flink-conf", " "},
			code: 2, want: []string{"--flink-conf", "empty"}},
		{name: "launch --flink-conf empty", args: []string{"launch", "--flink-conf", "", "--", "true"},
			code: 91, want: []string{"--flink-conf", "empty"}},
		{name: "am --flink-conf empty", args: []string{"am", "--job", "$D/job.toml", "--flink-conf", ""},
			code: 2, want: []string{"--flink-conf", "empty"}},
		{name: "HADOOP_CONF_DIR missing", args: []string{"check", "$D/job.toml"}, env: map[string]string{"HADOOP_CONF_DIR": "/nonexistent/conf"},
			code: 3, want: []string{"HADOOP_CONF_DIR", "/nonexistent/conf", "does not exist"}},
		{name: "YARN_CONF_DIR missing", args: []string{"list"}, env: map[string]string{"HADOOP_CONF_DIR": "", "YARN_CONF_DIR": "/nonexistent/yconf"},
			code: 3, want: []string{"YARN_CONF_DIR", "/nonexistent/yconf", "does not exist"}},
		{name: "HADOOP_CONF_DIR a file", args: []string{"cluster"}, env: map[string]string{"HADOOP_CONF_DIR": "$D/job.toml"},
			code: 3, want: []string{"HADOOP_CONF_DIR", "job.toml", "not a directory"}},
		{name: "HADOOP_CONF_DIR without yarn-site.xml", args: []string{"status", "application_1_0001"}, env: map[string]string{"HADOOP_CONF_DIR": "$D/empty"},
			files: map[string]string{"empty/": ""}, code: 3, want: []string{"HADOOP_CONF_DIR", "empty", "yarn-site.xml"}},
		{name: "no configuration directory", args: []string{"kill", "application_1_0001"}, env: map[string]string{"HADOOP_CONF_DIR": "", "YARN_CONF_DIR": ""},
			code: 3, want: []string{"neither HADOOP_CONF_DIR nor YARN_CONF_DIR is set"}},
		{name: "malformed yarn-site.xml", args: []string{"check", "$D/job.toml"}, env: map[string]string{"HADOOP_CONF_DIR": "$D/bad"},
			files: map[string]string{"bad/yarn-site.xml": "<configuration><property>"}, code: 3, want: []string{"yarn-site.xml"}},

		// --- values that changed without a word, and messages that said too little or too much ---
		{name: "memory 512b", args: []string{"check", "$D/job.toml"}, job: job(`memory = "512b"` + "\n"),
			code: 3, want: []string{"taskexecutor.memory", `"512b"`, "bytes", "k, m, g or t"}},
		{name: "memory 2ib", args: []string{"check", "$D/job.toml"}, job: job(`memory = "2ib"` + "\n"),
			code: 3, want: []string{"taskexecutor.memory", `"2ib"`, "no unit"}},
		{name: "am memory 512b by -D", args: []string{"check", "$D/job.toml", "-D", "am.memory=512b"},
			code: 3, want: []string{"am.memory", `"512b"`, "not a memory size"}},
		{name: "-D value with a newline", args: []string{"check", "$D/job.toml", "-D", "taskexecutor.instances=3\n40"},
			code: 2, want: []string{"-D", `"taskexecutor.instances"`, "line break", `"3\n40"`}},
		{name: "-D value with a carriage return", args: []string{"submit", "$D/job.toml", "-Dqueue=a\rb"},
			code: 2, want: []string{"-D", `"queue"`, "line break", `"a\rb"`}},
		{name: "flink job: -D near miss of a job key", args: []string{"check", "$D/job.toml", "-D", "taskexecuter.instances=3"}, job: flinkJob,
			code: 3, want: []string{"-D taskexecuter.instances", `did you mean "taskexecutor.instances"`, "-D flink.config.taskexecuter.instances"}},
		{name: "flink job: -D queu", args: []string{"check", "$D/job.toml", "-D", "queu=etl"}, job: flinkJob,
			code: 3, want: []string{"-D queu", `did you mean "queue"`, "flink.config.queu"}},
		{name: "YARN_AM_TOKENS_REFRESH banana in taskexecutor.env", args: []string{"check", "$D/job.toml"}, job: job(`env = {YARN_AM_TOKENS_REFRESH = "banana"}` + "\n"),
			code: 3, want: []string{"taskexecutor.env", "YARN_AM_TOKENS_REFRESH", `"banana"`, "30s"}},
		{name: "YARN_AM_TOKENS_REFRESH 1ms in am.env", args: []string{"check", "$D/job.toml"}, job: okJob + "[am.env]\nYARN_AM_TOKENS_REFRESH = \"1ms\"\n",
			code: 3, want: []string{"am.env", "YARN_AM_TOKENS_REFRESH", `"1ms"`, "at least 1s"}},
		{name: "flink class-data-sharing a string", args: []string{"check", "$D/job.toml"}, job: strings.Replace(flinkJob, "[taskexecutor]", "class-data-sharing = \"no\"\n[taskexecutor]", 1),
			code: 3, want: []string{`flink.class-data-sharing = "no"`, "want true or false"}},
		{name: "flink jit-late-c2 a string", args: []string{"check", "$D/job.toml"}, job: strings.Replace(flinkJob, "[taskexecutor]", "jit-late-c2 = \"on\"\n[taskexecutor]", 1),
			code: 3, want: []string{`flink.jit-late-c2 = "on"`, "want true or false"}},
		{name: "flink job with keep-containers = true", args: []string{"check", "$D/job.toml"}, job: "keep-containers = true\n" + flinkJob,
			code: 3, want: []string{"keep-containers = true", "[flink]", "TaskManagers cannot follow", "set it to false"}},
		{name: "flink provided with a bad port", args: []string{"check", "$D/job.toml"}, job: strings.Replace(flinkJob, "hdfs:///flink/flink-1.20.5.tar", "hdfs://nn:99999/flink/flink-1.20.5.tar", 1),
			code: 3, want: []string{"flink.provided", "hdfs://nn:99999/flink/flink-1.20.5.tar", `"99999"`, "1-65535"}},
		{name: "flink taskmanagers neither fixed nor demand", args: []string{"check", "$D/job.toml"}, job: strings.Replace(flinkJob, "[flink]\n", "[flink]\ntaskmanagers = \"elastic\"\n", 1),
			code: 3, want: []string{"flink.taskmanagers", `"elastic"`, `"fixed"`, `"demand"`}},
		{name: "flink min-instances without demand", args: []string{"check", "$D/job.toml"}, job: flinkJob + "min-instances = 1\n",
			code: 3, want: []string{"taskexecutor.min-instances = 1", `flink.taskmanagers is not "demand"`}},
		{name: "flink demand min-instances above instances", args: []string{"check", "$D/job.toml"}, job: strings.Replace(flinkJob, "[flink]\n", "[flink]\ntaskmanagers = \"demand\"\n", 1) + "min-instances = 2\n",
			code: 3, want: []string{"taskexecutor.min-instances = 2", "from 1 to taskexecutor.instances = 1", `taskmanagers = "demand"`}},
		{name: "flink own REST TLS without a trust store", args: []string{"check", "$D/job.toml", "-D", "security.ssl.rest.enabled=true"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{"security.ssl.rest.enabled = true needs security.ssl.rest.truststore", "PKCS12"}},
		{name: "flink own REST TLS without client authentication", args: []string{"check", "$D/job.toml", "-D", "security.ssl.rest.enabled=true", "-D", "security.ssl.rest.truststore=t.p12"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{"security.ssl.rest.enabled = true without security.ssl.rest.authentication-enabled = true", "answer anyone", "[flink] rest-tls-without-client-auth = true"}},
		{name: "flink rest-tls-without-client-auth not a boolean", args: []string{"check", "$D/job.toml"}, job: strings.Replace(flinkJob, "[flink]\n", "[flink]\nrest-tls-without-client-auth = \"yes\"\n", 1),
			code: 3, want: []string{"flink.rest-tls-without-client-auth", `"yes"`, "want true or false"}},
		{name: "flink own REST trust store of type JKS", args: []string{"check", "$D/job.toml", "-D", "security.ssl.rest.enabled=true", "-D", "security.ssl.rest.truststore=t.jks", "-D", "security.ssl.rest.truststore-type=JKS"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`security.ssl.rest.truststore-type = "JKS"`, "PKCS12 stores only", "keytool"}},
		// --- the JobManager's ports (docs/flink.md#what-check-refuses) ---
		{name: "flink jobmanager.rpc.port -1", args: []string{"check", "$D/job.toml", "-D", "jobmanager.rpc.port=-1"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`jobmanager.rpc.port = "-1"`, "-D jobmanager.rpc.port=-1", "from 0 (any free port) to 65535"}},
		{name: "flink jobmanager.rpc.port 70000", args: []string{"check", "$D/job.toml", "-D", "jobmanager.rpc.port=70000"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`jobmanager.rpc.port = "70000"`, "-D jobmanager.rpc.port=70000", "from 0 (any free port) to 65535"}},
		{name: "flink jobmanager.rpc.port abc", args: []string{"check", "$D/job.toml", "-D", "jobmanager.rpc.port=abc"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`jobmanager.rpc.port = "abc"`, "-D jobmanager.rpc.port=abc", "from 0 (any free port) to 65535"}},
		{name: "flink jobmanager.rpc.port 6123.5", args: []string{"check", "$D/job.toml", "-D", "jobmanager.rpc.port=6123.5"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`jobmanager.rpc.port = "6123.5"`, "-D jobmanager.rpc.port=6123.5", "from 0 (any free port) to 65535"}},
		{name: "flink rest.bind-port -1", args: []string{"check", "$D/job.toml", "-D", "rest.bind-port=-1"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`rest.bind-port = "-1"`, "-D rest.bind-port=-1", "from 0 (any free port) to 65535"}},
		{name: "flink rest.bind-port 70000", args: []string{"check", "$D/job.toml", "-D", "rest.bind-port=70000"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`rest.bind-port = "70000"`, "-D rest.bind-port=70000", "from 0 (any free port) to 65535"}},
		{name: "flink rest.bind-port abc", args: []string{"check", "$D/job.toml", "-D", "rest.bind-port=abc"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`rest.bind-port = "abc"`, "-D rest.bind-port=abc", "from 0 (any free port) to 65535"}},
		{name: "flink rest.bind-port 6123.5", args: []string{"check", "$D/job.toml", "-D", "rest.bind-port=6123.5"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`rest.bind-port = "6123.5"`, "-D rest.bind-port=6123.5", "from 0 (any free port) to 65535"}},
		{name: "flink rest.port -1", args: []string{"check", "$D/job.toml", "-D", "rest.port=-1"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`rest.port = "-1"`, "-D rest.port=-1", "from 0 (any free port) to 65535"}},
		{name: "flink rest.port 70000", args: []string{"check", "$D/job.toml", "-D", "rest.port=70000"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`rest.port = "70000"`, "-D rest.port=70000", "from 0 (any free port) to 65535"}},
		{name: "flink rest.port abc", args: []string{"check", "$D/job.toml", "-D", "rest.port=abc"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`rest.port = "abc"`, "-D rest.port=abc", "from 0 (any free port) to 65535"}},
		{name: "flink rest.port 6123.5", args: []string{"check", "$D/job.toml", "-D", "rest.port=6123.5"}, job: localJarFlinkJob, files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`rest.port = "6123.5"`, "-D rest.port=6123.5", "from 0 (any free port) to 65535"}},
		{name: "flink rest.bind-port a range upside down in the job file", args: []string{"check", "$D/job.toml"}, job: localJarFlinkJob + "[flink.config]\n\"rest.bind-port\" = \"50200-50100\"\n", files: map[string]string{"job.jar": ""},
			code: 3, want: []string{`rest.bind-port = "50200-50100"`, "[flink.config]", "ends below its start", "a range such as 50100-50200"}},
		{name: "flink demand with a bad taskmanager-timeout", args: []string{"check", "$D/job.toml", "-D", "resourcemanager.taskmanager-timeout=soon"}, job: strings.Replace(flinkJob, "[flink]\n", "[flink]\ntaskmanagers = \"demand\"\n", 1),
			code: 3, want: []string{"resourcemanager.taskmanager-timeout", `"soon"`, `"30 s"`}},
		{name: "flink hadoop-classpath a number", args: []string{"check", "$D/job.toml"}, job: strings.Replace(flinkJob, "[taskexecutor]", "hadoop-classpath = 5\n[taskexecutor]", 1),
			code: 3, want: []string{"flink.hadoop-classpath = 5", "a list of absolute paths", "'hadoop classpath'", "[] for none"}},
		{name: "flink hadoop-classpath a relative entry", args: []string{"check", "$D/job.toml"}, job: strings.Replace(flinkJob, "[taskexecutor]", "hadoop-classpath = [\"$HADOOP_CONF_DIR\", \"share/hadoop/*\"]\n[taskexecutor]", 1),
			code: 3, want: []string{"flink.hadoop-classpath", `"share/hadoop/*"`, "is relative"}},
		{name: "flink web-submit on an application cluster", args: []string{"check", "$D/job.toml"}, job: strings.Replace(flinkJob, "[flink]\n", "[flink]\nweb-submit = true\n", 1),
			code: 3, want: []string{"flink.web-submit = true", "application cluster", "drop jar for a session cluster"}},
		{name: "flink internal-tls not a boolean", args: []string{"check", "$D/job.toml"}, job: strings.Replace(flinkJob, "[flink]\n", "[flink]\ninternal-tls = \"off\"\n", 1),
			code: 3, want: []string{"flink.internal-tls", `"off"`, "want true or false"}},
		{name: "flink internal TLS keys of the user's with internal-tls on", args: []string{"check", "$D/job.toml", "-D", "security.ssl.internal.keystore=/etc/ks.p12"}, job: flink2Job(""),
			files: flink2Home(nil), code: 3, want: []string{"security.ssl.internal.keystore", "/etc/ks.p12", "[flink] internal-tls = false"}},
		{name: "flink provided with no path", args: []string{"check", "$D/job.toml"}, job: strings.Replace(flinkJob, "hdfs:///flink/flink-1.20.5.tar", "hdfs://flink.tar", 1),
			code: 3, want: []string{"flink.provided", "hdfs://flink.tar", "no path"}},
		{name: "flink checkpoint-on-preemption not a value", args: []string{"check", "$D/job.toml"}, job: strings.Replace(flinkJob, "[taskexecutor]", "checkpoint-on-preemption = \"sometimes\"\n[taskexecutor]", 1),
			code: 3, want: []string{"flink.checkpoint-on-preemption", `"sometimes"`, "checkpoint, savepoint, off"}},
		// --- Flink 2's own rules (docs/flink.md#flink-2) ---
		{name: "flink 2 home with only flink-conf.yaml", args: []string{"check", "$D/job.toml"}, job: flink2Job(""),
			files: flink2Home(map[string]string{"flink-conf.yaml": "taskmanager.numberOfTaskSlots: 2\n"}),
			code:  3, want: []string{"flink.home", "conf/flink-conf.yaml", "Flink 2.3.0 no longer reads", "only conf/config.yaml", "bin/migrate-config-file.sh"}},
		{name: "flink 2 removed key in the job file", args: []string{"check", "$D/job.toml"}, job: flink2Job(`"taskmanager.heap.size" = "2g"` + "\n"),
			files: flink2Home(nil),
			code:  3, want: []string{`"taskmanager.heap.size" = "2g"`, "the job file's [flink.config]", "Flink 2.3.0 does not read it", "taskexecutor.memory"}},
		{name: "flink 2 removed key in -D", args: []string{"check", "$D/job.toml", "-D", "cluster.evenly-spread-out-slots=true"}, job: flink2Job(""),
			files: flink2Home(nil),
			code:  3, want: []string{`"cluster.evenly-spread-out-slots" = "true"`, "-D cluster.evenly-spread-out-slots=true", `use "taskmanager.load-balance.mode" instead`}},
		{name: "flink 2 removed key in the home's config.yaml", args: []string{"check", "$D/job.toml"}, job: flink2Job(""),
			files: flink2Home(map[string]string{"config.yaml": "state:\n  backend:\n    async: " + strings.Repeat("x", 5000) + "\n"}),
			code:  3, want: []string{`"state.backend.async"`, "conf/config.yaml", "nothing replaces it"}, not: []string{strings.Repeat("x", 100)}, inert: true},
		{name: "flink java-home missing", args: []string{"check", "$D/job.toml"}, job: withJavaHome("nojdk"),
			code: 3, want: []string{"flink.java-home", `"nojdk"`, "no such directory", "bin/java", "JAVA_VERSION", "hdfs://"}},
		{name: "flink java-home without bin/java", args: []string{"check", "$D/job.toml"}, job: withJavaHome("jdk"), files: map[string]string{"jdk/release": "JAVA_VERSION=\"17\"\n"},
			code: 3, want: []string{"flink.java-home", `"jdk"`, "no bin/java", "a JDK directory"}},
		{name: "flink java-home without JAVA_VERSION", args: []string{"check", "$D/job.toml"}, job: withJavaHome("jdk"),
			files: map[string]string{"jdk/bin/java": "#!/bin/sh\n", "jdk/release": "OS_NAME=\"Linux\"\n"},
			code:  3, want: []string{"flink.java-home", `"jdk"`, "no JAVA_VERSION line", "a JDK directory"}},
		{name: "flink java-home release a named pipe", args: []string{"check", "$D/job.toml"}, job: withJavaHome("jdk"),
			files: map[string]string{"jdk/bin/java": "#!/bin/sh\n", "jdk/release|": ""},
			code:  3, want: []string{"flink.java-home", "jdk/release", "named pipe"}},
		{name: "flink java-home bin/java not executable", args: []string{"check", "$D/job.toml"}, job: withJavaHome("jdk"),
			files: map[string]string{"jdk/bin/java": "#!/bin/sh\n", "jdk/release": "JAVA_VERSION=\"17.0.15\"\n"},
			code:  3, want: []string{"flink.java-home", `"jdk"`, "bin/java is not executable", "a JDK directory"}},
		{name: "flink java-home not hdfs", args: []string{"check", "$D/job.toml"}, job: withJavaHome("s3://b/jdk-17.tar.gz"),
			code: 3, want: []string{"flink.java-home", `"s3://b/jdk-17.tar.gz"`, "hdfs://", ".tar.gz"}},
		{name: "yarn-site.xml includes a missing file", args: []string{"check", "$D/job.toml"}, env: map[string]string{"HADOOP_CONF_DIR": "$D/conf"},
			files: map[string]string{"conf/yarn-site.xml": `<configuration xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="rm.xml"/></configuration>`},
			code:  3, want: []string{"$D/conf/yarn-site.xml", `"rm.xml"`, "does not exist", "xi:fallback"}},
		{name: "yarn-site.xml includes a named pipe", args: []string{"check", "$D/job.toml"}, env: map[string]string{"HADOOP_CONF_DIR": "$D/conf"},
			files: map[string]string{"conf/yarn-site.xml": `<configuration xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="rm.xml"/></configuration>`, "conf/rm.xml|": ""},
			code:  3, want: []string{"$D/conf/rm.xml", "named pipe", "not a regular file"}},
		{name: "flag typo with a did-you-mean", args: []string{"check", "$D/job.toml", "--queu", "etl"},
			code: 2, want: []string{"unknown flag --queu", `did you mean "--queue"`}},
		{name: "flag with an escape sequence", args: []string{"check", "$D/job.toml", "--\x1b[2Jx"},
			code: 2, want: []string{"unknown flag", `"\x1b[2Jx"`}, not: []string{"\x1b"}},
		{name: "flag of 100 KB", args: []string{"check", "$D/job.toml", "--" + strings.Repeat("q", 100<<10)},
			code: 2, want: []string{"unknown flag", "(102400 bytes)"}, not: []string{strings.Repeat("q", 200)}},
		{name: "5,000 unknown keys", args: []string{"check", "$D/job.toml"}, job: manyUnknownKeys(5000) + okJob,
			code: 3, want: []string{"5000 problems", "and 4980 more"}, not: []string{"k4999"}},
		{name: "instances out of range for the TOML library", args: []string{"check", "$D/job.toml"}, job: job("instances = 99999999999999999999\n"),
			code: 3, want: []string{"job.toml", "line 4", "taskexecutor.instances", "out of range", "9223372036854775807"}},
		{name: "a date that is no date", args: []string{"check", "$D/job.toml"}, job: "started = 1979-13-27\n" + okJob,
			code: 3, want: []string{"line 1", "started", "invalid datetime", "YYYY-MM-DD"}},
		{name: "a 100 KB integer", args: []string{"check", "$D/job.toml"}, job: job("instances = " + strings.Repeat("9", 100<<10) + "\n"),
			code: 3, want: []string{"taskexecutor.instances", "is out of range for int64", "(102400 bytes)"}, not: []string{strings.Repeat("9", 300)}},
		// --- issue 33 §2: escape sequences and 100 KB values in each kind of place reach the terminal
		// escaped and bounded (the whole message: inertAndBounded) ---
		{name: "esc: job name", args: []string{"check", "$D/job.toml"}, job: "name = \"a\\u001b[2J\\u0007" + strings.Repeat("n", 100<<10) + "\"\n[taskexecutor]\ncommand = \"x\"\n",
			code: 3, want: []string{"name", `\x1b[2J`}, inert: true},
		{name: "esc: unknown key", args: []string{"check", "$D/job.toml"}, job: okJob + "\"k\\u001b[2J\\u0007" + strings.Repeat("k", 100<<10) + "\" = 1\n",
			code: 3, want: []string{`\x1b[2J`}, inert: true},
		{name: "esc: visibility", args: []string{"check", "$D/job.toml"}, job: job("visibility = \"\\u001b[2J\\u0007" + strings.Repeat("v", 100<<10) + "\"\n"),
			code: 3, want: []string{"taskexecutor.visibility", `\x1b[2J`}, inert: true},
		{name: "esc: files entry", args: []string{"check", "$D/job.toml"}, job: job("files = [\"\\u001b[2J\\u0007" + strings.Repeat("f", 100<<10) + "\"]\n"),
			code: 3, want: []string{"taskexecutor.files", `\x1b[2J`}, inert: true},
		{name: "esc: env name", args: []string{"check", "$D/job.toml"}, job: job("env = {\"A\\u001b[2J\\u0007" + strings.Repeat("e", 100<<10) + "\" = \"x\"}\n"),
			code: 3, want: []string{"taskexecutor.env", `\x1b[2J`}, inert: true},
		{name: "esc: hdfs-namenodes host", args: []string{"check", "$D/job.toml"}, job: "hdfs-namenodes = [\"hdfs://n\\u001b[2J\\u0007" + strings.Repeat("h", 100<<10) + ":99999\"]\n" + okJob,
			code: 3, want: []string{"hdfs-namenodes", `\x1b[2J`}, inert: true},
		{name: "esc: node label", args: []string{"check", "$D/job.toml"}, job: job("node-label = \"\\u001b[2J\\u0007" + strings.Repeat("l", 100<<10) + "\"\n"),
			code: 3, want: []string{`\x1b[2J`}, inert: true},
		{name: "esc: -D key", args: []string{"check", "$D/job.toml", "-D", "\x1b[2J\x07" + strings.Repeat("d", 100<<10) + "=1"},
			code: 3, want: []string{"-D", `\x1b[2J`}, inert: true},
		{name: "esc: flink-conf key", args: []string{"check", "$D/job.toml", "--flink-conf", "$D/flink-conf.yaml"},
			files: map[string]string{"flink-conf.yaml": "external-resource.gpu.a\x1b[2J\x07" + strings.Repeat("y", 100<<10) + ": 2\n"},
			code:  3, want: []string{"external-resource.gpu.a", `\x1b[2J`}, inert: true},
		{name: "esc: status id", args: []string{"status", "application_\x1b[2J\x07" + strings.Repeat("1", 100<<10)},
			code: 2, want: []string{`\x1b[2J`}, inert: true},
		{name: "esc: logs --container", args: []string{"logs", "application_1_0001", "--container", "c\x1b[2J\x07" + strings.Repeat("c", 100<<10)},
			code: 2, want: []string{`\x1b[2J`}, inert: true},
		{name: "a 100 KB queue with a space", args: []string{"check", "$D/job.toml", "-D", "queue=a " + strings.Repeat("q", 100<<10)},
			code: 3, want: []string{"queue", "(102402 bytes)"}, not: []string{strings.Repeat("q", 200)}},
	}
}

// lockedBuffer is a bytes.Buffer safe for a command still running after its case gave up on it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// closedPort returns a 127.0.0.1 port nothing listens on.
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return p
}

// TestBadInputs runs every bad input through the real command functions with a cluster configuration
// whose ResourceManager and NameNode are a listener of the test: each must fail with its exit code
// and a message naming the key, flag or variable, the value and what is valid, and none may connect
// to that address (validation fails before any network use). The listener counts connections: the
// proof is that count, not a time (under load the machine's speed is anyone's guess).
func TestBadInputs(t *testing.T) {
	cluster, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cluster.Close() })
	var dialed atomic.Int64
	go func() {
		for {
			c, err := cluster.Accept()
			if err != nil {
				return
			}
			dialed.Add(1)
			c.Close()
		}
	}()
	port := cluster.Addr().(*net.TCPAddr).Port
	conf := t.TempDir()
	site := fmt.Sprintf(`<configuration>
<property><name>yarn.resourcemanager.address</name><value>127.0.0.1:%d</value></property>
<property><name>fs.defaultFS</name><value>hdfs://127.0.0.1:%d</value></property>
</configuration>`, port, port)
	for _, f := range []string{"yarn-site.xml", "core-site.xml"} {
		if err := os.WriteFile(filepath.Join(conf, f), []byte(site), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HADOOP_USER_NAME", "alice")
	cases := badInputs()
	clear, codeOK := 0, 0
	for _, c := range cases {
		ok := t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			expand := func(s string) string { return strings.ReplaceAll(s, "$D", dir) }
			j := c.job
			if j == "" {
				j = okJob
			}
			if err := os.WriteFile(filepath.Join(dir, "job.toml"), []byte(j), 0o644); err != nil {
				t.Fatal(err)
			}
			for name, content := range c.files {
				p := filepath.Join(dir, name)
				if link, ok := strings.CutSuffix(p, "@"); ok {
					if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(content, link); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if pipe, ok := strings.CutSuffix(p, "|"); ok {
					if err := os.MkdirAll(filepath.Dir(pipe), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := syscall.Mkfifo(pipe, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if strings.HasSuffix(name, "/") {
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				// $RM in a file is the cluster's address, the test's listener.
				content = strings.ReplaceAll(content, "$RM", cluster.Addr().String())
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("HADOOP_CONF_DIR", conf)
			t.Setenv("YARN_CONF_DIR", "")
			for k, v := range c.env {
				t.Setenv(k, expand(v))
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = expand(a)
			}
			stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
			start, before := time.Now(), dialed.Load()
			done := make(chan int, 1)
			go func() { done <- run(args, stdout, stderr) }()
			var code int
			select {
			case code = <-done:
			case <-time.After(time.Minute): // a guard against a hang, not the proof
				t.Errorf("still running after a minute; stderr so far:\n%s", stderr.String())
				return
			}
			took := time.Since(start)
			msg := stderr.String()
			if c.code == 0 {
				msg = stdout.String()
			}
			t.Logf("exit %d in %v:\n%s", code, took.Round(time.Millisecond), msg)
			if n := dialed.Load() - before; n > 0 {
				t.Errorf("connected %d times to the cluster's address: validation must fail before any network use", n)
			}
			var missing []string
			for _, w := range c.want {
				if !strings.Contains(msg, expand(w)) {
					missing = append(missing, w)
				}
			}
			for _, n := range append(append([]string{}, c.not...), goInternals...) {
				if strings.Contains(msg, n) {
					missing = append(missing, "not "+n)
				}
			}
			if c.once != "" && strings.Count(msg, c.once) != 1 {
				missing = append(missing, fmt.Sprintf("%q once (found %d times)", c.once, strings.Count(msg, c.once)))
			}
			if c.inert {
				if len(msg) > 9<<10 {
					missing = append(missing, fmt.Sprintf("at most 9 KiB (%d bytes)", len(msg)))
				}
				if i := strings.IndexFunc(msg, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f }); i >= 0 {
					missing = append(missing, fmt.Sprintf("no raw control byte (%q at %d)", msg[i], i))
				}
			}
			if len(missing) == 0 {
				clear++
			} else {
				t.Errorf("message lacks %q", missing)
			}
			if code == c.code {
				codeOK++
			} else {
				t.Errorf("exit code %d, want %d", code, c.code)
			}
		})
		_ = ok
	}
	t.Logf("bad inputs: %d; clear message: %d; right exit code: %d", len(cases), clear, codeOK)
	if n := dialed.Load(); n > 0 { // a connection accepted after its row ended is counted here
		t.Errorf("the bad inputs connected %d times to the cluster's address: validation must fail before any network use", n)
	}
}

// TestClusterHelpPrintsTheDocumentedUsage: `cluster --help` prints the usage of `help cluster`, like
// every other command, not Go's flag defaults.
func TestClusterHelpPrintsTheDocumentedUsage(t *testing.T) {
	for _, name := range []string{"cluster", "list", "status", "kill", "check", "submit", "discover", "version", "am", "launch"} {
		var want, got, stderr bytes.Buffer
		if code := run([]string{"help", name}, &want, &stderr); code != 0 {
			t.Fatalf("help %s: exit %d", name, code)
		}
		if code := run([]string{name, "--help"}, &got, &stderr); code != 0 {
			t.Errorf("%s --help: exit %d, want 0; stderr %s", name, code, stderr.String())
		}
		if got.String() != want.String() {
			t.Errorf("%s --help printed\n%s\nwant the usage of 'yarn-am help %s'", name, got.String(), name)
		}
	}
}
