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
// script, so the user's $VARS are expanded by the worker's bash after the launcher has set them.
func LauncherCommand(jobFile, flinkConf string, defines []string, command string) string {
	parts := []string{"./" + StagedBinary, "launch", "-f", ShellQuote(jobFile)}
	if flinkConf != "" {
		parts = append(parts, "--flink-conf", ShellQuote(flinkConf))
	}
	for _, d := range defines {
		parts = append(parts, "-D", ShellQuote(d))
	}
	parts = append(parts, "--", "/bin/bash", "-c", ShellQuote(command), "1>"+LogDirVar+"/stdout", "2>"+LogDirVar+"/stderr")
	return EscapeForLaunchScript(strings.Join(parts, " "))
}
