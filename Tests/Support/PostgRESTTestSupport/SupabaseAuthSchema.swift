import Foundation
import PostgresTestSupport

/// Supabase's authentication pieces, recreated on a test PostgreSQL: the API roles and the `auth`
/// schema's functions that row-level security and SQL functions key on.
///
/// From Supabase's own migrations:
/// - the roles, from supabase/postgres `migrations/db/init-scripts/00000000000000-initial-schema.sql`:
///   `anon`, `authenticated` and `service_role` (NOLOGIN NOINHERIT; `service_role` BYPASSRLS), the
///   login role `authenticator` (NOINHERIT) granted all three, `USAGE` on `public` for them, and the
///   API roles' statement timeouts (`anon` 3 s, `authenticated` 8 s), which PostgREST applies on
///   switching to the role;
/// - the schema `auth` with `USAGE` for the API roles, from supabase/postgres
///   `migrations/db/init-scripts/00000000000001-auth-schema.sql`;
/// - `auth.uid()`, `auth.role()`, `auth.email()` and `auth.jwt()` as supabase/auth's migration
///   `20240624145325_recreate_auth_functions.up.sql` defines them today (SQL, `STABLE`, empty
///   `search_path`, reading `request.jwt.claims` or the legacy `request.jwt.claim.*` settings).
///
/// Roles belong to the whole server, so ``installRoles(on:)`` is idempotent and serialized (an
/// advisory lock): any number of tests and processes may install them on one server. The schema
/// belongs to a database: ``install(on:database:)`` installs both.
public enum SupabaseAuthSchema {
  /// The password of the `authenticator` role on test servers: the same on every one, because
  /// roles are shared by every test (and process) that uses a server.
  public static let authenticatorPassword = "authenticator-stand-in"

  /// The roles' SQL: creates what is missing (whoever races it), grants, sets the password and the
  /// role settings. One transaction under an advisory lock.
  public static let rolesSQL = """
    BEGIN;
    SELECT pg_advisory_xact_lock(2023011723);
    DO $roles$
    DECLARE
      role_name text;
    BEGIN
      FOREACH role_name IN ARRAY ARRAY['anon', 'authenticated', 'service_role', 'authenticator'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = role_name) THEN
          BEGIN
            EXECUTE format('CREATE ROLE %I NOLOGIN NOINHERIT', role_name);
          EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;  -- made meanwhile by another database's set-up
          END;
        END IF;
      END LOOP;
    END
    $roles$;
    ALTER ROLE anon NOLOGIN NOINHERIT;
    ALTER ROLE authenticated NOLOGIN NOINHERIT;
    ALTER ROLE service_role NOLOGIN NOINHERIT BYPASSRLS;
    ALTER ROLE authenticator LOGIN NOINHERIT PASSWORD '\(authenticatorPassword)';
    GRANT anon, authenticated, service_role TO authenticator;
    ALTER ROLE anon SET statement_timeout = '3s';
    ALTER ROLE authenticated SET statement_timeout = '8s';
    COMMIT;
    """

  /// The `auth` schema's SQL for one database (run by a superuser): the schema, its functions as
  /// Supabase defines them, and the API roles' `USAGE` on `auth` and `public`.
  public static let authSchemaSQL = """
    CREATE SCHEMA IF NOT EXISTS auth;
    GRANT USAGE ON SCHEMA auth TO anon, authenticated, service_role;
    GRANT USAGE ON SCHEMA public TO anon, authenticated, service_role;

    CREATE OR REPLACE FUNCTION auth.uid()
        RETURNS uuid
        SET search_path TO ''
    AS $func$
      select
        coalesce(
          nullif(current_setting('request.jwt.claim.sub', true), ''),
          (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
        )::uuid
    $func$ LANGUAGE sql STABLE;

    CREATE OR REPLACE FUNCTION auth.role()
        RETURNS text
        SET search_path TO ''
    AS $func$
      select
        coalesce(
          nullif(current_setting('request.jwt.claim.role', true), ''),
          (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
        )::text
    $func$ LANGUAGE sql STABLE;

    CREATE OR REPLACE FUNCTION auth.email()
        RETURNS text
        SET search_path TO ''
    AS $func$
      select
        coalesce(
          nullif(current_setting('request.jwt.claim.email', true), ''),
          (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'email')
        )::text
    $func$ LANGUAGE sql STABLE;

    CREATE OR REPLACE FUNCTION auth.jwt()
        RETURNS jsonb
        SET search_path TO ''
    AS $func$
      select
        coalesce(
          nullif(current_setting('request.jwt.claim', true), ''),
          nullif(current_setting('request.jwt.claims', true), '')
        )::jsonb
    $func$ LANGUAGE sql STABLE;
    """

  /// Creates (or brings up to date) the server-wide roles.
  /// - Throws: what the superuser's statements throw.
  public static func installRoles(on server: PostgresTestServer) throws {
    try server.superuser(rolesSQL)
  }

  /// The roles on the server and the `auth` schema in `database`.
  /// - Throws: what the superuser's statements throw.
  public static func install(on server: PostgresTestServer, database: String) throws {
    try installRoles(on: server)
    try server.superuser(authSchemaSQL, database: database)
  }
}
