// Command standin stands in for a coomia-dip platform service on a real node. It reads the env
// and config the operator renders for a platform service (its ConfigMap as env, credentials from
// the generated Secrets), connects to what that config names: PostgreSQL through the `postgres`
// Service, Redis through the Sentinels, MinIO with the generated keys. It serves gRPC health on
// GRPC_PORT (the rendered probes) and HTTP /healthz, /readyz and /metrics on HTTP_PORT, and is
// SERVING only while every dependency it was given answers. It proves the wiring, not just the pods.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// A check answers whether one dependency works right now.
type check struct {
	name string
	run  func(ctx context.Context) error
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// trustFromEnv is the CA bundle of TLS_CA_FILE (the platform's CA, when its links use TLS), or
// nil: the system's roots.
func trustFromEnv() (*x509.CertPool, error) {
	file := os.Getenv("TLS_CA_FILE")
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("TLS_CA_FILE: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("TLS_CA_FILE %s: no PEM certificate in it", file)
	}
	return pool, nil
}

// checksFromEnv builds one check per dependency the rendered config names; none when it names none.
func checksFromEnv() ([]check, error) {
	var checks []check
	roots, err := trustFromEnv()
	if err != nil {
		return nil, err
	}
	if host := os.Getenv("DATABASE_HOST"); host != "" {
		// DATABASE_SSLMODE and DATABASE_SSLROOTCERT are libpq's sslmode and sslrootcert (verify-full
		// with the platform CA when the platform's links use TLS).
		dsn := fmt.Sprintf("host=%s port=%s dbname=%s user=%s password=%s connect_timeout=3 sslmode=%s",
			host, env("DATABASE_PORT", "5432"), env("DATABASE_NAME", "onto"), env("DATABASE_USER", "onto"),
			os.Getenv("DATABASE_PASSWORD"), env("DATABASE_SSLMODE", "disable"))
		if root := os.Getenv("DATABASE_SSLROOTCERT"); root != "" {
			dsn += " sslrootcert=" + root
		}
		checks = append(checks, check{"postgres", func(ctx context.Context) error {
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				return err
			}
			defer conn.Close(context.Background())
			var one int
			return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
		}})
	}
	// REDIS_TLS: Redis and its Sentinels speak only TLS; the chain and each server's name (the
	// Sentinels name the primary by its pod's headless name) are verified against TLS_CA_FILE.
	var redisTLS *tls.Config
	if os.Getenv("REDIS_TLS") == "true" {
		redisTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	switch os.Getenv("REDIS_MODE") {
	case "sentinel":
		client := redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName:    env("REDIS_MASTER_NAME", "onto-primary"),
			SentinelAddrs: strings.Split(os.Getenv("REDIS_SENTINEL_ADDRS"), ","),
			Password:      os.Getenv("REDIS_PASSWORD"),
			DialTimeout:   3 * time.Second,
			TLSConfig:     redisTLS,
		})
		checks = append(checks, check{"redis", redisCheck(client)})
	case "standalone":
		client := redis.NewClient(&redis.Options{
			Addr:        os.Getenv("REDIS_ADDR"),
			Password:    os.Getenv("REDIS_PASSWORD"),
			DialTimeout: 3 * time.Second,
			TLSConfig:   redisTLS,
		})
		checks = append(checks, check{"redis", redisCheck(client)})
	}
	if endpoint := os.Getenv("S3_ENDPOINT"); endpoint != "" {
		secure := strings.HasPrefix(endpoint, "https://")
		host := strings.TrimPrefix(strings.TrimPrefix(endpoint, "https://"), "http://")
		options := &minio.Options{
			Creds:  credentials.NewStaticV4(os.Getenv("S3_ACCESS_KEY"), os.Getenv("S3_SECRET_KEY"), ""),
			Secure: secure,
		}
		if secure && roots != nil {
			transport, err := minio.DefaultTransport(true)
			if err != nil {
				return nil, err
			}
			transport.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
			options.Transport = transport
		}
		client, err := minio.New(host, options)
		if err != nil {
			return nil, fmt.Errorf("S3_ENDPOINT %q: %w", endpoint, err)
		}
		buckets := strings.FieldsFunc(os.Getenv("S3_BUCKETS"), func(r rune) bool { return r == ',' })
		checks = append(checks, check{"minio", func(ctx context.Context) error {
			if len(buckets) == 0 {
				_, err := client.ListBuckets(ctx)
				return err
			}
			for _, b := range buckets {
				ok, err := client.BucketExists(ctx, b)
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("bucket %s does not exist", b)
				}
			}
			return nil
		}})
	}
	return checks, nil
}

// redisCheck writes and reads back a key on the primary the client found.
func redisCheck(client redis.UniversalClient) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		key := "standin:" + env("SERVICE_NAME", "standin")
		if err := client.Set(ctx, key, time.Now().UTC().Format(time.RFC3339Nano), time.Minute).Err(); err != nil {
			return err
		}
		return client.Get(ctx, key).Err()
	}
}

// state is the result of the last round of checks.
type state struct {
	mu       sync.Mutex
	failures map[string]string
	rounds   int
}

func (s *state) set(failures map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = failures
	s.rounds++
}

func (s *state) ready() (bool, map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rounds > 0 && len(s.failures) == 0, s.failures
}

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	checks, err := checksFromEnv()
	if err != nil {
		logger.Error("bad configuration", "error", err.Error())
		os.Exit(2)
	}
	names := make([]string, 0, len(checks))
	for _, c := range checks {
		names = append(names, c.name)
	}
	logger.Info("starting", "service", env("SERVICE_NAME", "standin"), "dependencies", names)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	healthServer := health.NewServer()
	healthServer.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	grpcServer := grpc.NewServer()
	healthpb.RegisterHealthServer(grpcServer, healthServer)
	grpcListener, err := net.Listen("tcp", ":"+env("GRPC_PORT", "9090"))
	if err != nil {
		logger.Error("gRPC listen", "error", err.Error())
		os.Exit(1)
	}
	go func() { _ = grpcServer.Serve(grpcListener) }()

	current := &state{}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ok, failures := current.ready(); !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			for name, why := range failures {
				_, _ = fmt.Fprintf(w, "%s: %s\n", name, why)
			}
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		ok, failures := current.ready()
		up := 0
		if ok {
			up = 1
		}
		_, _ = fmt.Fprintf(w, "# TYPE standin_ready gauge\nstandin_ready %d\n", up)
		for _, name := range names {
			failing := 0
			if _, bad := failures[name]; bad {
				failing = 1
			}
			_, _ = fmt.Fprintf(w, "standin_dependency_failing{dependency=%q} %d\n", name, failing)
		}
	})
	httpServer := &http.Server{Addr: ":" + env("HTTP_PORT", "8080"), Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := httpServer.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("HTTP server", "error", err.Error())
		}
	}()

	interval, err := time.ParseDuration(env("CHECK_INTERVAL", "2s"))
	if err != nil {
		interval = 2 * time.Second
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	wasReady := false
	for {
		failures := map[string]string{}
		for _, c := range checks {
			checkCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if err := c.run(checkCtx); err != nil {
				failures[c.name] = err.Error()
			}
			cancel()
		}
		current.set(failures)
		ready := len(failures) == 0
		if ready {
			healthServer.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
		} else {
			healthServer.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
		}
		if ready != wasReady {
			logger.Info("readiness changed", "ready", ready, "failing", failures)
			wasReady = ready
		}
		select {
		case <-ctx.Done():
			healthServer.Shutdown()
			grpcServer.GracefulStop()
			shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = httpServer.Shutdown(shutdownCtx)
			cancel()
			return
		case <-ticker.C:
		}
	}
}
