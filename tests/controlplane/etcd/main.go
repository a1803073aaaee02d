// Command etcd runs a single-member etcd for the integration tests' control plane.
//
// It embeds go.etcd.io/etcd/server/v3/embed at the version k8s.io/kubernetes pins, so
// the test suite needs no separately downloaded etcd release. Data lives in a temporary
// directory and fsync is off: the data is thrown away at the end of the test session.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func mustURL(raw string) url.URL {
	parsed, err := url.Parse(raw)
	if err != nil {
		log.Fatalf("invalid URL %q: %v", raw, err)
	}
	return *parsed
}

func main() {
	dataDir := flag.String("data-dir", "", "directory for etcd's data (required)")
	clientURL := flag.String("client-url", "http://127.0.0.1:2379", "URL clients (kube-apiserver) connect to")
	peerURL := flag.String("peer-url", "http://127.0.0.1:2380", "URL of the single peer listener")
	flag.Parse()
	if *dataDir == "" {
		log.Fatal("--data-dir is required")
	}

	cfg := embed.NewConfig()
	cfg.Name = "test"
	cfg.Dir = *dataDir
	cfg.LogLevel = "error"
	// Test data is disposable; skipping fsync keeps writes fast on a busy CI disk.
	cfg.UnsafeNoFsync = true
	client := mustURL(*clientURL)
	peer := mustURL(*peerURL)
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = fmt.Sprintf("%s=%s", cfg.Name, peer.String())

	server, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatalf("starting etcd: %v", err)
	}
	defer server.Close()

	select {
	case <-server.Server.ReadyNotify():
		// The Python fixture waits for this line before starting kube-apiserver.
		fmt.Println("etcd ready")
	case <-time.After(60 * time.Second):
		server.Server.Stop()
		log.Fatal("etcd did not become ready within 60s")
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	select {
	case err := <-server.Err():
		log.Fatalf("etcd stopped: %v", err)
	case <-stop:
	}
}
