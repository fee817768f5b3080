// Package job is capwrap's background jobs (SPEC §10), without a daemon:
// both ends of the link between a launcher (`capwrap --background`,
// `--background-after`) and the job's supervisor, which runs the command
// as a runner.Run whose runner.Hooks it implements; and the verbs that
// come back to a job later by its capture, wait and stop. All state is in
// the capture directory.
package job
