package testdb

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// postgresBin is where Debian's PostgreSQL 15 keeps initdb and postgres;
// TXSINK_TEST_POSTGRES_BIN overrides it.
const postgresBin = "/usr/lib/postgresql/15/bin"

// PrivatePostgres starts a PostgreSQL server of the test's own: a cluster
// initialized into a temporary folder, on a free port with its own socket
// folder, with wal_level=logical (which the shared server lacks) and room
// for replication slots and WAL senders, plus extra server settings given
// as "name=value" (passed as -c name=value). It returns a database "test"
// on it, reached over TCP as the superuser "postgres" without a password.
// The server is stopped by its process id when the test ends. PostgreSQL
// refuses to run as root, so as root the cluster belongs to the "postgres"
// user. Without initdb and postgres the test fails under CI=true and is
// skipped otherwise.
func PrivatePostgres(t testing.TB, settings ...string) *DB {
	t.Helper()
	bin := os.Getenv("TXSINK_TEST_POSTGRES_BIN")
	if bin == "" {
		bin = postgresBin
	}
	initdb, server := filepath.Join(bin, "initdb"), filepath.Join(bin, "postgres")
	for _, p := range []string{initdb, server} {
		if _, err := os.Stat(p); err != nil {
			unavailable(t, p, "TXSINK_TEST_POSTGRES_BIN", err)
		}
	}
	dir := t.TempDir()
	// The socket's path must fit in 107 bytes, which a test's temporary
	// folder (named after the test) need not: the socket gets a short one.
	sock, err := os.MkdirTemp("", "pg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	cred := postgresCredential(t, dir, sock)
	data := filepath.Join(dir, "data")
	run := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(name, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "LANG=C.UTF-8")
		return cmd
	}
	if out, err := run(initdb, "--no-sync", "--auth=trust", "--username=postgres", "--encoding=UTF8", "-D", data).CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	port := FreePort(t)
	args := []string{"-D", data, "-p", strconv.Itoa(port), "-k", sock, "-c", "listen_addresses=127.0.0.1",
		"-c", "wal_level=logical", "-c", "max_replication_slots=20", "-c", "max_wal_senders=20",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"}
	for _, s := range settings {
		args = append(args, "-c", s)
	}
	logFile, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := run(server, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start postgres: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logFile.Close() }()
	t.Cleanup(func() {
		// SIGINT is PostgreSQL's fast shutdown: clients are disconnected.
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	base := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	awaitServer(t, "postgres", admin, exited, filepath.Join(dir, "server.log"))
	if _, err := admin.Exec("CREATE DATABASE test"); err != nil {
		t.Fatalf("create database test: %v", err)
	}
	priv := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/test?sslmode=disable", port)
	conn, err := sql.Open("pgx", priv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &DB{Dialect: "postgres", URL: priv, SQL: conn}
}

// postgresCredential returns who the server runs as: nil (the test's own
// user) unless the test runs as root, which PostgreSQL refuses; then the
// "postgres" user, who is given the folders (and passage through the
// temporary folder's parents, which t.TempDir makes private).
func postgresCredential(t testing.TB, dirs ...string) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("PostgreSQL does not run as root and there is no postgres user to run it as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, d := range dirs {
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
		if parent := filepath.Dir(d); parent != filepath.Clean(os.TempDir()) {
			if err := os.Chmod(parent, 0o711); err != nil {
				t.Fatal(err)
			}
		}
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}
