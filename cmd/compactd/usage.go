package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
)

// usageError is a command line compactd cannot run: missing or extra
// arguments, an unknown flag or command. It exits with status 2 and the
// command's usage, as Unix tools do; every other failure exits with 1.
type usageError struct {
	cmd *cobra.Command
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// markUsageErrors makes the argument and flag errors of c and its
// subcommands usageErrors.
func markUsageErrors(c *cobra.Command) {
	c.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{c, err} })
	if args := c.Args; args != nil {
		c.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return &usageError{c, err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markUsageErrors(sub)
	}
}

// exitCode is the process status for err (nil: 0) and the usage to print
// with it ("" for none).
func exitCode(root *cobra.Command, err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var u *usageError
	if errors.As(err, &u) {
		return 2, u.cmd.UsageString()
	}
	// cobra's own check of the root's arguments (no Args of ours there).
	if strings.HasPrefix(err.Error(), "unknown command ") {
		return 2, root.UsageString()
	}
	return 1, ""
}
