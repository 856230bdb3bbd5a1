package testdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/txsink/txsink/sink/sqlsink/mysql"
)

// PrivateMariaDB starts a MariaDB server of the test's own, in a
// temporary folder on a free port, with extra server options (such as
// "--max-allowed-packet=8192", which the shared server's users must not
// see), and returns a database "test" on it. The server is stopped by its
// process id when the test ends. It needs mariadb-install-db and
// mariadbd; without them the test fails under CI=true and is skipped
// otherwise.
func PrivateMariaDB(t testing.TB, options ...string) *DB {
	t.Helper()
	install, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		unavailable(t, "mariadb-install-db", "PATH", err)
	}
	server, err := exec.LookPath("mariadbd")
	if err != nil {
		unavailable(t, "mariadbd", "PATH", err)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if out, err := exec.Command(install, "--no-defaults", "--datadir="+data, "--auth-root-authentication-method=normal",
		"--skip-test-db", "--user="+currentUser()).CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	port := FreePort(t)
	args := append([]string{"--no-defaults", "--datadir=" + data, "--socket=" + filepath.Join(dir, "sock"),
		"--port=" + fmt.Sprint(port), "--bind-address=127.0.0.1", "--skip-grant-tables", "--local-infile=1",
		"--log-error=" + filepath.Join(dir, "error.log"), "--pid-file=" + filepath.Join(dir, "pid"), "--user=" + currentUser()}, options...)
	cmd := exec.Command(server, args...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start mariadbd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	base := fmt.Sprintf("mysql://root@127.0.0.1:%d/mysql", port)
	dsn, err := mysql.DSN(base)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	awaitServer(t, "mariadbd", admin, exited, filepath.Join(dir, "error.log"))
	if _, err := admin.Exec("CREATE DATABASE test CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"); err != nil {
		t.Fatalf("create database test: %v", err)
	}
	priv := fmt.Sprintf("mysql://root@127.0.0.1:%d/test", port)
	pdsn, _ := mysql.DSN(priv)
	conn, err := sql.Open("mysql", pdsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &DB{Dialect: "mysql", URL: priv, SQL: conn}
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listened on a
// moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// currentUser is the name mariadbd runs as: the test's own user.
func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

// awaitServer pings admin until the private server answers, failing the
// test with the server's log when it exits first or does not answer
// within a minute.
func awaitServer(t testing.TB, name string, admin *sql.DB, exited <-chan error, logPath string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := admin.PingContext(ctx)
		if err == nil {
			return
		}
		select {
		case werr := <-exited:
			log, _ := os.ReadFile(logPath)
			t.Fatalf("%s exited (%v) before it answered: %v\n%s", name, werr, err, log)
		case <-ctx.Done():
			t.Fatalf("%s did not answer within 60s: %v", name, errors.Join(err, ctx.Err()))
		case <-tick.C:
		}
	}
}
