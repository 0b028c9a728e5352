package testenv

import "syscall"

// sysProcAttr makes a component die with the test binary that started it, so
// a test killed by its timeout leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
