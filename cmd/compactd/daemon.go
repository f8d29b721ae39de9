package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/compactd/compactd/fleet"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
)

func newDaemonCmd() *cobra.Command {
	var configFile, listen, coordinator, replicaID string
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Run the maintenance daemon: compaction, expiration and orphan cleanup of the configured warehouses",
		Long: `Run the maintenance daemon over the warehouses of --config.

SIGTERM/SIGINT: stop taking work, let running jobs finish within grace-period, then cancel
them. SIGHUP: reload the config file (the policy store is reloaded whenever it changes).
HTTP: /metrics (Prometheus), /healthz (liveness), /readyz (readiness: every warehouse
locked and discovered, else 503 and why), /status (JSON; an HTML page for browsers, or
?format=html).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, err := policy.LoadConfig(configFile)
			if err != nil {
				return err
			}
			if listen != "" {
				cfg.Listen = listen
			}
			if coordinator != "" {
				cfg.Coordinator.URL = coordinator
			}
			// SIGHUP is taken from here on: one that arrives while the
			// daemon starts must not kill it (its default action).
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			// One registry for the process: the Go runtime and process
			// collectors here, each component's metrics registered by it.
			reg := prometheus.NewRegistry()
			reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
			b := currentBuild()
			so := sched.Options{Registerer: reg, Gatherer: reg,
				Build: sched.BuildInfo{Version: b.Version, Commit: b.Commit, GoVersion: b.GoVersion}}
			var fl *fleet.Fleet
			if cfg.Coordinator.URL != "" {
				cfg.WithDefaults()
				fl, err = fleet.Open(ctx, fleet.Options{URL: cfg.Coordinator.URL, ID: replicaID, Workers: cfg.Workers,
					Coordinator: cfg.Coordinator, Retry: cfg.Retry, Registerer: reg})
				if err != nil {
					return err
				}
				so.Coordinator = fl
			}
			s, err := sched.New(cfg, so)
			if err != nil {
				if fl != nil {
					_ = fl.Stop(context.WithoutCancel(ctx), 0)
				}
				return err
			}
			if fl != nil {
				// Its own context: SIGTERM stops it below, after the
				// scheduler, with the grace period.
				if err := fl.Start(context.WithoutCancel(ctx), s); err != nil {
					_ = fl.Stop(context.WithoutCancel(ctx), 0)
					return err
				}
				slog.Info("fleet replica started", "replica", fl.ID())
			}
			ln, err := net.Listen("tcp", cfg.Listen)
			if err != nil {
				return fmt.Errorf("listen %s: %w", cfg.Listen, err)
			}
			srv := sched.NewHTTPServer(cfg.HTTP, s.Handler())
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					slog.Error("http server", "err", err)
				}
			}()
			slog.Info("compactd daemon started", "config", configFile, "listen", ln.Addr().String(),
				"warehouses", len(cfg.Warehouses), "workers", cfg.Workers)

			go func() {
				for {
					select {
					case <-ctx.Done():
						return
					case <-hup:
						next, err := policy.LoadConfig(configFile)
						if err == nil {
							if listen != "" {
								next.Listen = listen
							}
							err = s.Reload(ctx, next) // counts its outcome
						} else {
							s.ReloadFailed(err)
						}
						if err != nil {
							slog.Error("SIGHUP: config not reloaded, keeping the previous one", "err", err)
						}
					}
				}
			}()
			runErr := s.Run(ctx)
			if fl != nil {
				if err := fl.Stop(context.WithoutCancel(ctx), cfg.GracePeriod.D()); err != nil {
					slog.Warn("fleet: stop", "err", err)
				}
			}
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdown)
			if runErr != nil {
				return runErr
			}
			slog.Info("compactd daemon stopped")
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "compactd.yaml", "config file")
	cmd.Flags().StringVar(&coordinator, "coordinator", "", "PostgreSQL URL (postgres://…): run as one replica of a fleet coordinated there (overrides coordinator.url of the config)")
	cmd.Flags().StringVar(&replicaID, "replica-id", "", "this replica's name in the fleet (default host-pid)")
	cmd.Flags().StringVar(&listen, "listen", "", "HTTP listen address (overrides the config; default "+policy.DefaultListen+")")
	return cmd
}
