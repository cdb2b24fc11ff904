package contract

import "strings"

// LogDirVar is expanded by YARN to the container's log directory in a launch command.
const LogDirVar = "<LOG_DIR>"

// ShellQuote quotes s as one word for bash: unchanged when it has only safe characters, else in single
// quotes with each embedded single quote written as '\”.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// nmExpansionBreaker keeps the NodeManager from expanding anything in a quoted word: it replaces
// {{ with $, drops }}, and replaces <CPS> and <LOG_DIR> in a launch command (YARN's cross-platform
// parameter expansion), after our escaping, so {{(cmd)}} would become a live $(cmd) in the launch
// script. Every {, } and < of a word ShellQuote quoted stands inside single quotes, where an empty
// pair of single quotes next to it is nothing to bash: a double brace becomes brace, quote pair,
// brace, quote pair, which no expansion matches and bash reads as the double brace again.
var nmExpansionBreaker = strings.NewReplacer("{", "{''", "}", "''}", "<", "<''")

// QuoteForLaunch quotes s as one word of a YARN launch command (ShellQuote) so that it reaches the
// program unchanged: the NodeManager's {{VAR}}, <CPS> and <LOG_DIR> expansions do not apply to it
// (TestLaunchCommandsSurviveTheNodeManagersExpansion).
func QuoteForLaunch(s string) string {
	q := ShellQuote(s)
	if strings.ContainsAny(s, "{}<") {
		q = nmExpansionBreaker.Replace(q)
	}
	return q
}

// launchScriptEscaper escapes what is special inside bash double quotes.
var launchScriptEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")

// EscapeForLaunchScript escapes a command line for YARN's launch script, which embeds the command in
// double quotes (`exec /bin/bash -c "<command>"`): without this, $, `, " and \ in a command would be
// interpreted by the launch script instead of reaching bash -c unchanged (a job's command could then
// run code in the launch script; TestAMCommandSurvivesTheLaunchScript).
func EscapeForLaunchScript(cmd string) string {
	return launchScriptEscaper.Replace(cmd)
}

// LauncherCommand is the TaskExecutor's command line: the user's command run by bash inside
// `yarn-am launch`, with its output in the container's log directory, escaped for YARN's launch
// script, so the user's $VARS are expanded by the worker's bash after the launcher has set them. The
// -D overrides travel in EnvDefines, not here: a command line is readable by every user of the node.
// resourceConf is the staged external-resource configuration (StagedResourceConf; "" for none),
// passed as the launcher's --flink-conf.
func LauncherCommand(jobFile, resourceConf, command string) string {
	parts := []string{"./" + StagedBinary, "launch", "-f", QuoteForLaunch(jobFile)}
	if resourceConf != "" {
		parts = append(parts, "--flink-conf", QuoteForLaunch(resourceConf))
	}
	parts = append(parts, "--", "/bin/bash", "-c", QuoteForLaunch(command), "1>"+LogDirVar+"/stdout", "2>"+LogDirVar+"/stderr")
	return EscapeForLaunchScript(strings.Join(parts, " "))
}
