#!/bin/sh
# Run once by the pgvector image when its data volume is new: the login ragd serves as. It gets
# no attribute of its own; ragd's migrations (run as the owner, RAGD_MIGRATE_DATABASE_URL) grant
# it the role ragd_app and nothing more.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
	-v pw="$RAGD_LOGIN_PASSWORD" <<'SQL'
CREATE ROLE ragd_login LOGIN PASSWORD :'pw';
SQL
