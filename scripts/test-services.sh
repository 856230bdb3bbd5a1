#!/usr/bin/env bash
# Starts the servers txsink's integration tests use, if they are down, and
# creates the dedicated test user on MariaDB (root may only log in over the
# socket, so tests never use it). Safe to run again.
#
#   MariaDB:    mysql://txsink:txsink@127.0.0.1:3306/test
#   PostgreSQL: postgres://postgres@127.0.0.1:5432/test?sslmode=disable
#   NATS:       nats://127.0.0.1:4222, with JetStream (the nats source)
set -euo pipefail

wait_for() { # name, command...
  local name=$1; shift
  for _ in $(seq 1 60); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  echo "test-services: $name did not come up" >&2
  return 1
}

if ! mariadb-admin ping --silent >/dev/null 2>&1; then
  echo "test-services: starting MariaDB"
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  wait_for MariaDB mariadb-admin ping --silent
fi
mariadb -uroot <<'SQL'
CREATE DATABASE IF NOT EXISTS test;
CREATE USER IF NOT EXISTS 'txsink'@'127.0.0.1' IDENTIFIED BY 'txsink';
CREATE USER IF NOT EXISTS 'txsink'@'localhost' IDENTIFIED BY 'txsink';
GRANT ALL PRIVILEGES ON *.* TO 'txsink'@'127.0.0.1';
GRANT ALL PRIVILEGES ON *.* TO 'txsink'@'localhost';
FLUSH PRIVILEGES;
SQL

if ! pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1; then
  echo "test-services: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
  wait_for PostgreSQL pg_isready -h 127.0.0.1 -p 5432
fi
psql -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='test'" | grep -q 1 \
  || psql -h 127.0.0.1 -U postgres -d postgres -c "CREATE DATABASE test"
nats_up() { (exec 3<>/dev/tcp/127.0.0.1/4222) 2>/dev/null; }
if ! nats_up; then
  echo "test-services: starting NATS with JetStream"
  mkdir -p /var/lib/nats-server
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  wait_for NATS nats_up
fi
echo "test-services: MariaDB, PostgreSQL and NATS are up"
