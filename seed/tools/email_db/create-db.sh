#!/bin/sh
# Creates an empty mail store with email_db's schema: ./create-db.sh /srv/officer-mail/emails.db
# Refuses to touch an existing file. Needs sqlite3 (Debian: apt-get install sqlite3).
set -eu
if [ $# -ne 1 ]; then
  echo "usage: $0 DATABASE_FILE" >&2
  exit 2
fi
db=$1
if [ -e "$db" ]; then
  echo "$db already exists; not touching it" >&2
  exit 1
fi
command -v sqlite3 >/dev/null 2>&1 || { echo "sqlite3 is missing: apt-get install sqlite3" >&2; exit 1; }
sqlite3 -bail "$db" < "$(dirname "$0")/schema.sql"
echo "created $db"
