// Package docsrun runs the shell blocks the docs mark runnable (a fence
// opened with "```sh {runnable}"; docs/README.md) against the whole-system
// bed, so that a command in the docs that no longer works fails a test.
package docsrun
