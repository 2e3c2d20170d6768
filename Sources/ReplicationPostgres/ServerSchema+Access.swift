import Postgres

extension ServerSchema {
  /// Who may call the functions, and who owns a request: applied by every `remote init` after
  /// the migrations (it is not a migration: a database that gains Supabase's pieces later is set
  /// up for the API by running `remote init` again).
  ///
  /// - **API mode** (the database has the `authenticated` role and `auth.uid()`, as every
  ///   Supabase project does): a request of the `authenticated` role is owned by
  ///   `user:<auth.uid()>`; `EXECUTE` goes to `authenticated` (and to the group role
  ///   `eventlog_devices`, when it exists, for per-customer database roles), never to `PUBLIC`
  ///   or `anon`.
  /// - **Role mode** (plain PostgreSQL): every role that can connect may call the functions and
  ///   owns `role:<its OID>`; `anon`, `authenticated`, `authenticator` and `service_role`, if
  ///   they exist, own nothing.
  ///
  /// The owner comes from the session's role (`SET ROLE`, or the login role), which a
  /// `SECURITY DEFINER` function still sees, never from `current_user`; a role that sets the
  /// JWT claims itself is still itself.
  ///
  /// - Parameters:
  ///   - api: whether the database has Supabase's auth pieces (API mode).
  ///   - version: the schema version the migrations reached: the functions of later versions do
  ///     not exist yet.
  /// - Returns: the SQL.
  static func accessScript(api: Bool, version: Int) -> String {
    let userBranch =
      api
      ? """
      IF v_role = 'authenticated' THEN
        v_user := auth.uid();
        IF v_user IS NULL THEN
          RAISE EXCEPTION 'eventlog: the request has no signed-in user (no "sub" claim): sign in again'
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN 'user:' || v_user::text;
      END IF;
      """ : ""
    let grantees = api ? "authenticated" : "PUBLIC"
    var functions = [
      "eventlog_api.push(uuid, text, bigint, jsonb)",
      "eventlog_api.pull(bigint, uuid, integer, integer, integer)",
      "eventlog_api.device_mark(uuid, text)", "eventlog_api.head()", "eventlog_api.channel()",
      "eventlog_api.server_info()",
      "eventlog.push_events(uuid, text, bigint, jsonb)",
      "eventlog.pull_events(bigint, uuid, integer, integer, integer)", "eventlog.device_mark_of(uuid, text)",
      "eventlog.head_of_owner()", "eventlog.channel_of_owner()", "eventlog.server_info_of_owner()",
    ]
    if version >= 5 {
      functions += [
        "eventlog_api.push(uuid, text, bigint, jsonb, text)",
        "eventlog_api.pull_chained(bigint, uuid, integer, integer, integer)",
        "eventlog_api.attested_heads(uuid, bigint, integer)",
        "eventlog.push_events(uuid, text, bigint, jsonb, text)",
        "eventlog.pull_chained_events(bigint, uuid, integer, integer, integer)",
        "eventlog.attested_heads_of(uuid, bigint, integer)",
      ]
    }
    if version >= 6 {
      functions += [
        "eventlog_api.push_keys(uuid, jsonb)", "eventlog_api.pull_keys(bigint, integer)",
        "eventlog_api.pull_subjects(bigint, uuid, integer, integer, integer)",
        "eventlog.push_keys_of(uuid, jsonb)", "eventlog.pull_keys_of(bigint, integer)",
        "eventlog.pull_subject_events(bigint, uuid, integer, integer, integer)",
      ]
    }
    let grants = functions.map { "GRANT EXECUTE ON FUNCTION \($0) TO \(grantees);" }.joined(separator: "\n")
    return """
      CREATE OR REPLACE FUNCTION eventlog.current_owner() RETURNS text
      LANGUAGE plpgsql STABLE SET search_path = '' AS $$
      DECLARE
        v_role text := pg_catalog.current_setting('role');
        v_user uuid;
        v_oid oid;
      BEGIN
        IF v_role IS NULL OR v_role = 'none' THEN
          v_role := session_user;
        END IF;
        \(userBranch)
        IF v_role IN ('anon', 'authenticated', 'authenticator', 'service_role') THEN
          RAISE EXCEPTION 'eventlog: the role % owns no events: a device signs in as a user (or connects as its own role)', v_role
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        SELECT r.oid INTO v_oid FROM pg_catalog.pg_roles r WHERE r.rolname = v_role;
        IF v_oid IS NULL THEN
          RAISE EXCEPTION 'eventlog: the role % does not exist', v_role USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN 'role:' || v_oid::text;
      END $$;
      COMMENT ON FUNCTION eventlog.current_owner() IS
        'The owner of a request: user:<auth.uid()> for Supabase''s authenticated role (API mode), else role:<the session role''s OID>.';

      REVOKE ALL ON ALL TABLES IN SCHEMA eventlog FROM PUBLIC;
      GRANT SELECT ON eventlog.schema_info TO PUBLIC;
      REVOKE ALL ON ALL FUNCTIONS IN SCHEMA eventlog FROM PUBLIC;
      REVOKE ALL ON ALL FUNCTIONS IN SCHEMA eventlog_api FROM PUBLIC;
      REVOKE ALL ON SCHEMA eventlog_api FROM PUBLIC;
      GRANT USAGE ON SCHEMA eventlog TO PUBLIC;
      DO $$
      DECLARE
        r text;
      BEGIN
        FOREACH r IN ARRAY ARRAY['anon', 'authenticated', 'service_role', 'eventlog_devices'] LOOP
          IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r) THEN
            EXECUTE pg_catalog.format('REVOKE ALL ON ALL TABLES IN SCHEMA eventlog FROM %I', r);
            EXECUTE pg_catalog.format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA eventlog FROM %I', r);
            EXECUTE pg_catalog.format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA eventlog_api FROM %I', r);
            EXECUTE pg_catalog.format('REVOKE ALL ON SCHEMA eventlog_api FROM %I', r);
          END IF;
        END LOOP;
      END $$;
      GRANT USAGE ON SCHEMA eventlog_api TO \(grantees);
      \(grants)
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'eventlog_devices') THEN
          GRANT USAGE ON SCHEMA eventlog_api TO eventlog_devices;
          \(functions.map { "GRANT EXECUTE ON FUNCTION \($0) TO eventlog_devices;" }.joined(separator: "\n        "))
        END IF;
      END $$;
      """
  }

  /// Whether the database has Supabase's auth pieces: the `authenticated` role and `auth.uid()`.
  static let detectAPI = """
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'authenticated')
      AND pg_catalog.to_regprocedure('auth.uid()') IS NOT NULL AS api
    """

  /// Whether every role may create objects in the schema `public` (PostgreSQL 14 and older by
  /// default): a role that can put a function or operator there can run code as another role
  /// whose `search_path` reaches it. This schema's functions pin theirs, but the database's
  /// other code may not.
  static let publicIsWritable = """
    SELECT EXISTS (
      SELECT 1 FROM pg_catalog.pg_namespace n,
        pg_catalog.aclexplode(coalesce(n.nspacl, pg_catalog.acldefault('n', n.nspowner))) a
      WHERE n.nspname = 'public' AND a.grantee = 0 AND a.privilege_type = 'CREATE'
    ) AS writable
    """

  /// Adds `prefixes` to the stream-name prefixes the server accepts
  /// (`eventlog.replicated_streams`), removing none: apps that share a server each add their own
  /// (``removeReplicatedStream(_:on:)`` removes one).
  static func addReplicatedStreams(_ prefixes: [String], on connection: PostgresConnection) throws {
    for prefix in Set(prefixes).sorted() {
      try connection.query(
        "INSERT INTO eventlog.replicated_streams (prefix) VALUES ($1) ON CONFLICT (prefix) DO NOTHING",
        [.text(prefix)], purpose: "record the replicated stream prefix '\(prefix)'")
    }
  }
}
