// Command compactd compacts and maintains Apache Paimon tables.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "compactd:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	_ = ctx
	return fmt.Errorf("no command given")
}
