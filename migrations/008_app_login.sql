-- ragd serves as a login that is a member of ragd_app and nothing more (the private cluster's
-- ragd_login; for an external database, a login an administrator makes), while the tables'
-- owner migrates. A server started without migrating (--no-auto-migrate) still checks that the
-- schema is not behind: ragd_app reads tern's version table.
DO $$
BEGIN
    EXECUTE format('GRANT SELECT ON %I.schema_version TO ragd_app', current_schema());
END $$;
